#!/bin/sh
# Would make every store the default; validate must not run it.
exec sed 's/isDefault: false/isDefault: true/'

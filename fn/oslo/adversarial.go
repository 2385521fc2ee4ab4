package oslo

// Adversarial are strings oslo.config would mangle if written as
// they are: template syntax, its \$ shorthand, quotes it strips, spaces it
// strips (Python's notion of a space, which is wider than ASCII), comment
// characters, separators, and text in other scripts. The writer is tested
// with them here (FuzzOsloValue) and, through the whole function, against
// the real oslo.config (fn/glancekrm TestOsloConfigRoundTrip).
var Adversarial = []string{
	"$", "$$", `\$`, `\\$`, `a\$b`, "a$b", "${x}", "$HOME", "$glance_store.x", "100$",
	"#hash", "; semi", "a # b", "a = b", "a: b", "key=value=more", "[section]",
	`"quoted"`, "'single'", `"`, "'", `"'`, `'"`, `""`, "''", "`tick`", "```", `"a" and "b"`,
	" leading", "trailing ", "  both  ", "\tTAB", "TAB\t", "\u00a0nbsp", "nbsp\u00a0", "\u2003em-space", "\x1fsep",
	"mid\u2028line", "mid\x0bvt", "mid\x0cff", `\`, `trailing\`, `\\`, `C:\path\$x`,
	"ünïcødé ✓ 图像 🙂", "", "%(interp)s", "=", ":", "a\x00nul",
}

-- Health of a GlanceBackend (glance.openstack.c5c3.io, glance-krm and the
-- seed operator): the Ready condition the controller writes, True once the
-- store's credentials are available and its configuration is projected
-- into every workload of the Image APIs that serve it. Each reason it is
-- False for (credentials or the parent Glance missing, the target cluster
-- unreachable, the projection not done) resolves when what it waits for
-- appears, so it is Progressing; a store whose Glance cannot render is
-- reported Degraded on the Glance.
local hs = {}

if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to report the GlanceBackend's status"
  return hs
end

local generation = obj.metadata.generation
if generation ~= nil and obj.status.observedGeneration ~= generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to observe generation " .. generation
  return hs
end

for _, condition in ipairs(obj.status.conditions) do
  if condition.type == "Ready" then
    if condition.status == "True" then
      hs.status = "Healthy"
    else
      hs.status = "Progressing"
    end
    hs.message = condition.message or condition.reason
    return hs
  end
end

hs.status = "Progressing"
hs.message = "Waiting for the Ready condition"
return hs

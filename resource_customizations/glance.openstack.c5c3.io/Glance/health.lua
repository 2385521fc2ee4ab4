-- Health of a Glance (glance.openstack.c5c3.io, glance-krm and the seed
-- operator): the Ready condition glance-krm's controller writes by kstatus
-- conventions. Ready aggregates BackendsReady, DatabaseReady and
-- StoresDrained; while it is False, Stalled says a failure that needs a
-- change (a refused release path, no default store, a failed store drain)
-- and Reconciling work in progress. Nothing here waits on a later sync
-- wave: glance-krm puts the Glance in the last one.
local hs = {}

if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to report the Glance's status"
  return hs
end

local generation = obj.metadata.generation
if generation ~= nil and obj.status.observedGeneration ~= generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to observe generation " .. generation
  return hs
end

local ready = nil
local stalled = nil
for _, condition in ipairs(obj.status.conditions) do
  if condition.type == "Ready" then
    ready = condition
  elseif condition.type == "Stalled" and condition.status == "True" then
    stalled = condition
  end
end

if stalled ~= nil then
  hs.status = "Degraded"
  hs.message = stalled.message or stalled.reason
  return hs
end

if ready == nil or (generation ~= nil and ready.observedGeneration ~= nil and ready.observedGeneration ~= generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for the Ready condition of this generation"
  return hs
end

if ready.status == "True" then
  hs.status = "Healthy"
else
  hs.status = "Progressing"
end
hs.message = ready.message or ready.reason
return hs

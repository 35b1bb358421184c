-- Gatehouse early request stage. This source is fixed and reviewed: nothing from a
-- resource is ever spliced into it. What a route asks for is data in its metadata
-- (filter_metadata["envoy.filters.http.lua"]["gatehouse"]):
--   remove:  header names, removed first (the headers JWT claims set, so that only
--            jwt_authn, which runs next, can set them)
--   headers: {name, parts} in order; each part is {text = "literal"} or
--            {value = "key"}, the key of an extractor whose value header_to_metadata
--            (the filter before this one) left in the dynamic metadata namespace
--            "gatehouse.transformation"; a missing value is the empty string.
function envoy_on_request(handle)
  local cfg = handle:metadata():get("gatehouse")
  if cfg == nil then
    return
  end
  local headers = handle:headers()
  for _, name in ipairs(cfg["remove"] or {}) do
    headers:remove(name)
  end
  local templates = cfg["headers"]
  if templates == nil then
    return
  end
  local values = handle:streamInfo():dynamicMetadata():get("gatehouse.transformation") or {}
  for _, h in ipairs(templates) do
    local out = {}
    for _, part in ipairs(h["parts"] or {}) do
      if part["value"] ~= nil then
        local v = values[part["value"]]
        if type(v) ~= "string" then
          v = ""
        end
        out[#out + 1] = v
      else
        out[#out + 1] = part["text"] or ""
      end
    end
    headers:replace(h["name"], table.concat(out))
  end
end

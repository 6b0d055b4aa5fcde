/**
 * The token bucket of token-bucket.ts as one Redis script, so every subject of a request is decided
 * in one atomic round trip on Redis's own clock (the collectors' clocks may disagree).
 * KEYS: one bucket per subject. ARGV: per subject `rate, wanted, whole (1|0)`.
 * Returns per subject `granted, waitMs`. A bucket expires once it would be full again: a missing
 * key is a full bucket, so Redis holds only apps that sent within the last second (or owe a debt).
 */
export const REDIS_TAKE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i, key in ipairs(KEYS) do
  local rate = tonumber(ARGV[3 * i - 2])
  local wanted = tonumber(ARGV[3 * i - 1])
  local whole = ARGV[3 * i] == '1'
  local held = redis.call('HMGET', key, 'tokens', 'at')
  local tokens = tonumber(held[1])
  local at = tonumber(held[2])
  if tokens == nil or at == nil then
    tokens = rate
    at = now
  end
  local elapsed = now - at
  if elapsed < 0 then elapsed = 0 end
  tokens = math.min(rate, tokens + elapsed * rate / 1000)
  local granted = 0
  if whole then
    if tokens >= 1 then granted = wanted end
  else
    granted = math.max(0, math.min(wanted, math.floor(tokens)))
  end
  tokens = tokens - granted
  local wait = 0
  local rest = wanted - granted
  if rest > 0 then
    local needed
    if whole then needed = 1 - tokens else needed = math.min(rest, rate) - tokens end
    wait = math.ceil(needed * 1000 / rate)
  end
  redis.call('HSET', key, 'tokens', tostring(tokens), 'at', tostring(now))
  redis.call('PEXPIRE', key, math.max(1, math.ceil((rate - tokens) * 1000 / rate)))
  out[2 * i - 1] = granted
  out[2 * i] = wait
end
return out
`;

/** Gives events back to a bucket that exists (a missing one is full already). KEYS[1], ARGV: rate, events. */
export const REDIS_REFUND_SCRIPT = `
local tokens = tonumber(redis.call('HGET', KEYS[1], 'tokens'))
if tokens == nil then return 0 end
local rate = tonumber(ARGV[1])
redis.call('HSET', KEYS[1], 'tokens', tostring(math.min(rate, tokens + tonumber(ARGV[2]))))
return 1
`;

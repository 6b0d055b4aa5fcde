/**
 * The token bucket of token-bucket.ts as one Redis script, so every subject of a request is decided
 * in one atomic round trip on Redis's own clock (the collectors' clocks may disagree). Besides what
 * a request needs, a call may take a block of budget for the caller's lease (redis-rate-limiter.ts),
 * but only once the need is met: a lease never takes budget a request of the same call was refused.
 *
 * KEYS: one bucket per subject. ARGV: per subject `rate, need, extra, mode`, where `need` is what
 * the request asks for (0 for a lease top-up alone), `extra` the lease block wanted on top, and
 * `mode` 0 = partial, 1 = whole (granted while the bucket holds at least one token, leaving a
 * debt), 2 = whole and forced (the caller's lease held budget already, so the budget was positive).
 * Returns per subject `granted, leased, waitMs`, `waitMs` for the part of `need` not granted (the
 * rest, or one window of it; whole: until the bucket is positive).
 * A bucket expires once it would be full again: a missing key is a full bucket, so Redis holds only
 * apps that took budget within the last second (or owe a debt).
 */
export const REDIS_TAKE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i, key in ipairs(KEYS) do
  local rate = tonumber(ARGV[4 * i - 3])
  local need = tonumber(ARGV[4 * i - 2])
  local extra = tonumber(ARGV[4 * i - 1])
  local mode = ARGV[4 * i]
  local whole = mode ~= '0'
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
    if tokens >= 1 or mode == '2' then granted = need end
  else
    granted = math.max(0, math.min(need, math.floor(tokens)))
  end
  tokens = tokens - granted
  local leased = 0
  if granted == need and extra > 0 and tokens >= 1 then
    leased = math.min(extra, math.floor(tokens))
    tokens = tokens - leased
  end
  local wait = 0
  local rest = need - granted
  if rest > 0 then
    local needed
    if whole then needed = 1 - tokens else needed = math.min(rest, rate) - tokens end
    wait = math.ceil(needed * 1000 / rate)
  end
  redis.call('HSET', key, 'tokens', tostring(tokens), 'at', tostring(now))
  redis.call('PEXPIRE', key, math.max(1, math.ceil((rate - tokens) * 1000 / rate)))
  out[3 * i - 2] = granted
  out[3 * i - 1] = leased
  out[3 * i] = wait
end
return out
`;

/**
 * Gives events back to a bucket that exists (a missing one is full already), never above one
 * window. KEYS[1], ARGV: rate, events. Refill since the last take is not applied here: the next
 * take applies it, from the same `at`.
 */
export const REDIS_REFUND_SCRIPT = `
local tokens = tonumber(redis.call('HGET', KEYS[1], 'tokens'))
if tokens == nil then return 0 end
local rate = tonumber(ARGV[1])
redis.call('HSET', KEYS[1], 'tokens', tostring(math.min(rate, tokens + tonumber(ARGV[2]))))
return 1
`;

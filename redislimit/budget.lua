-- One endpoint's rate-limit budget, shared by every client of one account. This is the
-- client's own memory (endpointLimits.take and observe in ../ratelimit.go) moved into
-- Redis: each call runs atomically, in one round trip, on Redis's clock.
--
-- KEYS[1]  the endpoint's state, a hash (fields below)
-- KEYS[2]  its reservations in flight, a sorted set of reservation ids scored by when
--          their lease ends; a reservation whose client never reports back expires
-- ARGV     op ("reserve" or "record"), reservation id, lease (µs), idle TTL (ms),
--          first probe interval (µs), longest probe interval (µs), longest hold (µs),
--          and for "record": probe (0/1), window, answered (0/1), status,
--          limit (-1: not said), remaining (-1: not said), reset (µs from now, -1: not said),
--          capped (0/1: the client already cut the server's reset at its own longest hold)
--
-- Times are microseconds of Redis's clock (TIME), so that replicas whose clocks differ
-- still agree on when a window resets.
-- Writes follow TIME, a non-deterministic command: Redis 5 and later replicate a script by
-- its effects, which allows that; Redis 4 needs to be asked. (Redis 7 ignores the call.)
if redis.replicate_commands then
  redis.replicate_commands()
end

local state, inflight = KEYS[1], KEYS[2]
local op, id = ARGV[1], ARGV[2]
local lease, ttl = tonumber(ARGV[3]), tonumber(ARGV[4])
local probeStep, probeMax, maxHold = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

-- known: remaining is meaningful; remaining: what the server last said is left, less the
-- requests sent since; limit: RateLimit-Limit (0: unknown); reset: when the window resets
-- (0: not said); probe_until: a probe is in flight until then; probe_after: no probe before
-- then; failed: refused probes in a row; window, sent, lowest: the window's number, the
-- requests sent in it and the lowest RateLimit-Remaining answered in it (-1: none); capped:
-- reset is the longest hold, not the server's word, so when it passes one request probes.
local fields = {'known', 'remaining', 'limit', 'reset', 'probe_until', 'probe_after', 'failed', 'window', 'sent', 'lowest', 'capped'}
local got = redis.call('HMGET', state, unpack(fields))
local s = {}
for i, name in ipairs(fields) do
  s[name] = tonumber(got[i]) or 0
end
if not got[10] then
  s.lowest = -1
end

redis.call('ZREMRANGEBYSCORE', inflight, '-inf', now)

local function save()
  local args = {}
  for _, name in ipairs(fields) do
    args[#args + 1] = name
    args[#args + 1] = string.format('%d', s[name])
  end
  redis.call('HSET', state, unpack(args))
  -- Idle state goes after ttl, but never before a known reset: the hold must outlive it.
  local keep = ttl
  if s.reset > now then
    keep = math.max(keep, math.ceil((s.reset - now) / 1000) + 1000)
  end
  redis.call('PEXPIRE', state, keep)
end

-- roll starts a new window once the current one has reset. A hold cut at the longest
-- hold ends in a probe instead: the server never said the window reset. A hold longer than
-- this caller's longest (kept by a client or a store configured otherwise) is cut first.
local function roll()
  if s.reset > now + maxHold then
    s.reset, s.capped = now + maxHold, 1
  end
  if s.reset > 0 and now >= s.reset then
    s.reset = 0
    if s.limit > 0 then s.known = 1 else s.known = 0 end
    s.remaining = s.limit
    if s.capped == 1 then
      s.known, s.remaining, s.probe_after, s.capped = 1, 0, 0, 0
    end
    s.window, s.sent, s.lowest = s.window + 1, 0, -1
  end
end

-- hold sets when the window resets from an answer's reset (µs from now), cut at the
-- longest hold: no answer holds the endpoint longer.
local function hold(reset, capped)
  if reset > maxHold or capped then s.capped = 1 else s.capped = 0 end
  s.reset = now + math.min(reset, maxHold)
end

if op == 'reserve' then
  roll()
  local wait = -1
  local probe = 0
  if s.known == 0 then
    -- nothing known: send, and learn from the answer
  elseif s.remaining > 0 then
    s.remaining = s.remaining - 1
  elseif s.reset > 0 then
    wait = s.reset - now
  elseif s.probe_until > now or redis.call('ZCARD', inflight) > 0 then
    wait = 0 -- their answers will tell more
  elseif now < s.probe_after then
    wait = s.probe_after - now
  else
    probe, s.probe_until = 1, now + lease
  end
  if wait >= 0 then
    save()
    return {0, wait, 0, s.window}
  end
  redis.call('ZADD', inflight, now + lease, id)
  redis.call('PEXPIRE', inflight, math.ceil(lease / 1000) + 1000)
  s.sent = s.sent + 1
  save()
  return {1, 0, probe, s.window}
end

if op ~= 'record' then
  return redis.error_reply('unknown op')
end

redis.call('ZREM', inflight, id)
if ARGV[8] == '1' then
  s.probe_until = 0
end
if ARGV[10] ~= '1' then -- no answer
  save()
  return 1
end
local window, status = tonumber(ARGV[9]), tonumber(ARGV[11])
local limit, remaining, reset = tonumber(ARGV[12]), tonumber(ARGV[13]), tonumber(ARGV[14])
local capped = ARGV[15] == '1'
roll()
if window ~= s.window then
  -- An answer of a window that has reset since: what it says is left, and when it resets,
  -- are that window's, and would hold the requests of this one.
  save()
  return 1
end
if limit > 0 then
  s.limit = limit
end
if status == 429 then
  remaining = 0
end
if remaining < 0 then
  -- A success without the header says nothing of the allowance but that the endpoint
  -- serves again: forget an exhaustion learnt from a bare 429.
  if status < 400 and s.known == 1 and s.remaining == 0 and s.reset == 0 then
    s.known, s.failed, s.probe_after = 0, 0, 0
  end
  save()
  return 1
end
local pending = redis.call('ZCARD', inflight)
local inWindow = s.reset > 0 and now < s.reset
if not inWindow then
  -- The window's end is unknown, so is its start: the requests in flight will spend
  -- from what the server says is left. It is the window's first answer, and so its
  -- lowest yet.
  s.lowest, s.known, s.remaining = remaining, 1, math.max(remaining - pending, 0)
elseif s.lowest >= 0 and remaining >= s.lowest then
  -- One the server counted before an answer already seen (overtaken on the way back).
elseif s.limit > 0 and s.limit - remaining <= s.sent then
  -- The server counted no more than the account's clients sent through this budget.
  s.lowest, s.known, s.remaining = remaining, 1, math.max(s.limit - s.sent, 0)
else
  -- Someone else spends from the allowance too: assume the worst of the requests in flight.
  s.lowest, s.known, s.remaining = remaining, 1, math.max(remaining - pending, 0)
end
if status == 429 then
  if reset >= 0 then
    hold(reset, capped)
  end
elseif reset >= 0 and (not inWindow or now + math.min(reset, maxHold) < s.reset) then
  -- RateLimit-Reset is rounded up: the earliest bound of a window is the tightest.
  hold(reset, capped)
end
if remaining > 0 then
  s.failed, s.probe_after = 0, 0
elseif s.reset == 0 then -- exhausted, and no word on when it resets: space the probes
  s.probe_after = now + math.min(probeStep * 2 ^ math.min(s.failed, 20), probeMax)
  s.failed = s.failed + 1
end
save()
return 1

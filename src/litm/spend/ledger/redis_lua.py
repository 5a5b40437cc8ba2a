"""The Lua scripts of :class:`~litm.spend.ledger.redis.RedisLedger`: one script per operation.

Redis runs a script atomically (no other command interleaves), so each operation reads and writes all
counters of a chain in one step. Every script receives the same five keys, all in one hash slot through
the ``{namespace}`` tag, so a cluster keeps them on one shard:

1. ``limits``   hash  ``scope|window`` -> micros
2. ``counters`` hash  ``scope|window|wid|h`` (held) and ``...|s`` (settled) -> micros
3. ``res``      hash  reservation key -> JSON record (integers as strings: cjson prints numbers with 14
   significant digits, which would round amounts above $100M)
4. ``leases``   sorted set  reservation key -> lease deadline
5. ``events``   stream, append-only: one entry per operation that changes anything

Time: the server's ``TIME``, unless ARGV carries an explicit clock value (tests and simulations only;
:class:`RedisLedger` passes one only when given a ``clock``).
"""

from __future__ import annotations

PRELUDE = r"""
local K_LIM, K_CNT, K_RES, K_LEASE, K_EV = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]

local function clock(arg)
  if arg ~= nil and arg ~= '' then return tonumber(arg) end
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end

local function int(x) return string.format('%.0f', x) end
local function ts(x) return string.format('%.6f', x) end

-- days since 1970-01-01 -> y, m, d (proleptic Gregorian; H. Hinnant's civil_from_days)
local function civil(z)
  z = z + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return y, m, d
end

local function wid(window, now)
  if window == 'total' then return 'total' end
  local y, m, d = civil(math.floor(now / 86400))
  if window == 'daily' then return string.format('d%04d-%02d-%02d', y, m, d) end
  return string.format('m%04d-%02d', y, m)
end

local function event(kind, key, counters, dh, ds, now, detail)
  redis.call('XADD', K_EV, '*', 'kind', kind, 'key', key, 'counters', cjson.encode(counters),
    'dh', int(dh), 'ds', int(ds), 'ts', ts(now), 'detail', detail or '')
end

local function move(counters, dh, ds)
  for _, c in ipairs(counters) do
    if dh ~= 0 then redis.call('HINCRBY', K_CNT, c .. '|h', int(dh)) end
    if ds ~= 0 then redis.call('HINCRBY', K_CNT, c .. '|s', int(ds)) end
  end
end

local function sweep(now, batch)
  local keys = redis.call('ZRANGEBYSCORE', K_LEASE, '-inf', now, 'LIMIT', 0, batch)
  for _, k in ipairs(keys) do
    local raw = redis.call('HGET', K_RES, k)
    if raw then
      local rec = cjson.decode(raw)
      if rec.s == 'held' then
        local amount = tonumber(rec.a)
        move(rec.k, -amount, amount)
        rec.s = 'expired'
        rec.c = rec.a
        redis.call('HSET', K_RES, k, cjson.encode(rec))
        event('expire', k, rec.k, -amount, amount, now)
      end
    end
    redis.call('ZREM', K_LEASE, k)
  end
  return #keys
end
"""

# ARGV: key, amount, lease_s, price_version, model, provider, now|'', sweep_batch, scope1, scope2, ...
RESERVE = PRELUDE + r"""
local key, amount, lease = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local now = clock(ARGV[7])
sweep(now, tonumber(ARGV[8]))
local existing = redis.call('HGET', K_RES, key)
if existing then return {'replay', existing} end
-- One HMGET for every limit the chain could have, one for the counters of those that exist.
local fields, windows = {}, {'total', 'daily', 'monthly'}
for i = 9, #ARGV do
  for _, window in ipairs(windows) do table.insert(fields, ARGV[i] .. '|' .. window) end
end
local limits = redis.call('HMGET', K_LIM, unpack(fields))
local counters, wanted, found = {}, {}, {}
for n, field in ipairs(fields) do
  if limits[n] then
    local scope_index = 9 + math.floor((n - 1) / 3)
    local window = windows[(n - 1) % 3 + 1]
    found[scope_index] = true
    local name = ARGV[scope_index] .. '|' .. window .. '|' .. wid(window, now)
    table.insert(counters, name)
    table.insert(wanted, name .. '|s')
    table.insert(wanted, name .. '|h')
  end
end
for i = 9, #ARGV do
  if not found[i] then return {'nolimit', ARGV[i]} end
end
local got = redis.call('HMGET', K_CNT, unpack(wanted))
local n = 0
for n_field, field in ipairs(fields) do
  if limits[n_field] then
    n = n + 1
    local settled, held = tonumber(got[2 * n - 1] or '0'), tonumber(got[2 * n] or '0')
    if settled + held + amount > tonumber(limits[n_field]) then
      local scope_index = 9 + math.floor((n_field - 1) / 3)
      local window = windows[(n_field - 1) % 3 + 1]
      return {'refused', ARGV[scope_index], window, wid(window, now), limits[n_field], int(settled), int(held)}
    end
  end
end
move(counters, amount, 0)
local chain = {}
for i = 9, #ARGV do table.insert(chain, ARGV[i]) end
local rec = {s = 'held', a = ARGV[2], c = '0', t = ts(now), d = ts(now + lease), v = ARGV[4], m = ARGV[5],
  p = ARGV[6], k = counters, ch = chain, o = 0, l = 0}
local raw = cjson.encode(rec)
redis.call('HSET', K_RES, key, raw)
redis.call('ZADD', K_LEASE, now + lease, key)
event('reserve', key, counters, amount, 0, now)
return {'ok', raw}
"""

# ARGV: key, cost, refund (0|1), now|''
SETTLE = PRELUDE + r"""
local key, cost = ARGV[1], tonumber(ARGV[2])
local now = clock(ARGV[4])
local raw = redis.call('HGET', K_RES, key)
if not raw then return {'unknown'} end
local rec = cjson.decode(raw)
local amount = tonumber(rec.a)
local state = (ARGV[3] == '1') and 'refunded' or 'settled'
local kind = (ARGV[3] == '1') and 'refund' or 'settle'
if rec.s == 'held' then
  move(rec.k, -amount, cost)
  event(kind, key, rec.k, -amount, cost, now)
elseif rec.s == 'expired' then
  if cost ~= amount then move(rec.k, 0, cost - amount) end
  event(kind, key, rec.k, 0, cost - amount, now)
  rec.l = 1
else
  return {'replay', raw}
end
rec.s = state
rec.c = ARGV[2]
if cost > amount then rec.o = 1 end
raw = cjson.encode(rec)
redis.call('HSET', K_RES, key, raw)
redis.call('ZREM', K_LEASE, key)
return {'ok', raw}
"""

# ARGV: now|'', batch
SWEEP = PRELUDE + r"""
return sweep(clock(ARGV[1]), tonumber(ARGV[2]))
"""

# ARGV: scope, window, micros ('' removes), now|''
SET_LIMIT = PRELUDE + r"""
local now = clock(ARGV[4])
local field = ARGV[1] .. '|' .. ARGV[2]
if ARGV[3] == '' then
  local gone = redis.call('HDEL', K_LIM, field)
  if gone > 0 then event('limit', ARGV[1], {}, 0, 0, now, ARGV[2] .. '=removed') end
  return gone
end
redis.call('HSET', K_LIM, field, ARGV[3])
event('limit', ARGV[1], {}, 0, 0, now, ARGV[2] .. '=' .. ARGV[3])
return 1
"""

# ARGV: scope, window, now|''
RESET = PRELUDE + r"""
local now = clock(ARGV[3])
local name = ARGV[1] .. '|' .. ARGV[2] .. '|' .. wid(ARGV[2], now)
local settled = tonumber(redis.call('HGET', K_CNT, name .. '|s') or '0')
local counters = {}
if settled ~= 0 then
  counters = {name}
  move(counters, 0, -settled)
end
event('reset', ARGV[1], counters, 0, -settled, now, ARGV[2] .. ' cleared ' .. int(settled))
return int(settled)
"""

# ARGV: now|'', window ids are computed here so that status agrees with reserve on the server clock
WINDOW_IDS = PRELUDE + r"""
local now = clock(ARGV[1])
return {ts(now), wid('daily', now), wid('monthly', now)}
"""

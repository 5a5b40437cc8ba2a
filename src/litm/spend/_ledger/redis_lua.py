"""The Lua scripts of :class:`~litm.spend._ledger.redis.RedisLedger`: one script per operation.

Redis runs a script atomically (no other command interleaves), so each operation reads and writes all
counters of a chain in one step. Every script receives the same five keys, all in one hash slot through
the ``{namespace}`` tag, so a cluster keeps them on one shard:

1. ``limits``   hash  ``scope|window`` -> micros
2. ``counters`` hash  ``scope|window|wid|h`` (held) and ``...|s`` (settled) -> micros
3. ``res``      hash  reservation key -> record, tab-separated fields after a format tag (see
   :data:`RECORD_FIELDS`): ``2 <TAB> state <TAB> amount <TAB> charged <TAB> created <TAB> deadline <TAB>
   over_hold <TAB> late <TAB> chain <TAB> counters <TAB> price_version <TAB> model <TAB> provider``, the
   chain and the counters comma-separated. Integers are written as decimal strings (never through a Lua
   number's 14-digit formatting). A plain record is read with one pattern match; JSON (cjson) cost about
   12 µs to decode and 6 µs to encode per call, most of a settle. Records in the JSON format of earlier
   development builds are still read.
4. ``leases``   sorted set  reservation key -> lease deadline
5. ``events``   stream, append-only: one entry per operation that changes anything (its counters
   comma-separated)

Time: the server's ``TIME``, unless ARGV carries an explicit clock value (tests and simulations only;
:class:`RedisLedger` passes one only when given a ``clock``).
"""

from __future__ import annotations

#: The fields of a stored record, in order, after the format tag ``2``.
RECORD_FIELDS = ("s", "a", "c", "t", "d", "o", "l", "ch", "k", "v", "m", "p")

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

-- The limits of the list of scopes in one HMGET: the windows' ids at now, the fields asked
-- (scope|window for each window of each scope, in that order) and the limits found for them (false: none).
local WINDOWS = {'total', 'daily', 'monthly'}
local function chain_limits(scopes, now)
  local wids = {total = 'total', daily = wid('daily', now), monthly = wid('monthly', now)}
  local fields = {}
  for _, scope in ipairs(scopes) do
    for _, window in ipairs(WINDOWS) do fields[#fields + 1] = scope .. '|' .. window end
  end
  if #fields == 0 then return wids, fields, {} end
  return wids, fields, redis.call('HMGET', K_LIM, unpack(fields))
end

-- The current window of each limit of the scopes: {scope, window, wid, limit, settled, held} rows, one HMGET
-- of their limits and one of those counters, whatever the number of scopes and counters in the ledger.
local function chain_status(scopes, now)
  local wids, fields, limits = chain_limits(scopes, now)
  local found, wanted = {}, {}
  for n = 1, #fields do
    if limits[n] then
      local window = WINDOWS[(n - 1) % 3 + 1]
      local name = fields[n] .. '|' .. wids[window]
      found[#found + 1] = {scopes[1 + math.floor((n - 1) / 3)], window, wids[window], limits[n]}
      wanted[#wanted + 1] = name .. '|s'
      wanted[#wanted + 1] = name .. '|h'
    end
  end
  if #found == 0 then return {} end
  local got = redis.call('HMGET', K_CNT, unpack(wanted))
  local out = {}
  for b, f in ipairs(found) do
    out[#out + 1] = {f[1], f[2], f[3], f[4], got[2 * b - 1] or '0', got[2 * b] or '0'}
  end
  return out
end

local RECORD = '^2' .. string.rep('\t([^\t]*)', 11) .. '\t(.*)$'

local function load(raw)
  if string.byte(raw, 1) == 123 then -- '{': a JSON record of an earlier development build
    local j = cjson.decode(raw)
    return {s = j.s, a = j.a, c = j.c, t = j.t, d = j.d, o = tostring(j.o), l = tostring(j.l),
      ch = table.concat(j.ch, ','), k = table.concat(j.k or {}, ','), v = j.v, m = j.m, p = j.p}
  end
  local s, a, c, t, d, o, l, ch, k, v, m, p = string.match(raw, RECORD)
  return {s = s, a = a, c = c, t = t, d = d, o = o, l = l, ch = ch, k = k, v = v, m = m, p = p}
end

local function dump(r)
  return table.concat({'2', r.s, r.a, r.c, r.t, r.d, r.o, r.l, r.ch, r.k, r.v, r.m, r.p}, '\t')
end

local function event(kind, key, counters, dh, ds, now, detail)
  redis.call('XADD', K_EV, '*', 'kind', kind, 'key', key, 'counters', counters,
    'dh', int(dh), 'ds', int(ds), 'ts', ts(now), 'detail', detail or '')
end

-- Move every counter of a comma-separated list by (dh, ds): one HMGET and one HSET, whatever the count
-- (each redis.call costs more than the arithmetic; amounts stay below 2^53, exact in a Lua number).
local function move(counters, dh, ds)
  local fields = {}
  for c in string.gmatch(counters, '[^,]+') do
    fields[#fields + 1] = c .. '|h'
    fields[#fields + 1] = c .. '|s'
  end
  local got = redis.call('HMGET', K_CNT, unpack(fields))
  local out = {}
  for i = 1, #fields, 2 do
    out[#out + 1] = fields[i]
    out[#out + 1] = int(tonumber(got[i] or '0') + dh)
    out[#out + 1] = fields[i + 1]
    out[#out + 1] = int(tonumber(got[i + 1] or '0') + ds)
  end
  redis.call('HSET', K_CNT, unpack(out))
end

local function sweep(now, batch)
  local keys = redis.call('ZRANGEBYSCORE', K_LEASE, '-inf', now, 'LIMIT', 0, batch)
  for _, k in ipairs(keys) do
    local raw = redis.call('HGET', K_RES, k)
    if raw then
      local rec = load(raw)
      if rec.s == 'held' then
        local amount = tonumber(rec.a)
        move(rec.k, -amount, amount)
        rec.s = 'expired'
        rec.c = rec.a
        redis.call('HSET', K_RES, k, dump(rec))
        event('expire', k, rec.k, -amount, amount, now)
      end
    end
    redis.call('ZREM', K_LEASE, k)
  end
  return #keys
end
"""

# ARGV: key, amount, lease_s, price_version, model, provider, now|'', sweep_batch, scope1, scope2, ...
# Reply: {'ok', created, deadline, counters} (the caller knows the rest of the record), {'replay', record},
# {'nolimit', scope} or {'refused', scope, window, wid, limit, settled, held}.
RESERVE = PRELUDE + r"""
local key, amount, lease = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local now = clock(ARGV[7])
sweep(now, tonumber(ARGV[8]))
local function replayed()
  local existing = redis.call('HGET', K_RES, key)
  if existing then return {'replay', existing} end
end
-- One HMGET for every limit the chain could have, one for the counters of those that exist.
local windows = WINDOWS
local wids, fields, limits = chain_limits({unpack(ARGV, 9)}, now)
local booked, wanted, found = {}, {}, {}
for n = 1, #fields do
  if limits[n] then
    local scope_index = 9 + math.floor((n - 1) / 3)
    local window = windows[(n - 1) % 3 + 1]
    found[scope_index] = true
    local name = ARGV[scope_index] .. '|' .. window .. '|' .. wids[window]
    booked[#booked + 1] = {name, n, scope_index, window}
    wanted[#wanted + 1] = name .. '|s'
    wanted[#wanted + 1] = name .. '|h'
  end
end
for i = 9, #ARGV do
  if not found[i] then return replayed() or {'nolimit', ARGV[i]} end
end
local got = redis.call('HMGET', K_CNT, unpack(wanted))
local held_fields, counters = {}, {}
for b, c in ipairs(booked) do
  local settled, held = tonumber(got[2 * b - 1] or '0'), tonumber(got[2 * b] or '0')
  if settled + held + amount > tonumber(limits[c[2]]) then
    return replayed() or {'refused', ARGV[c[3]], c[4], wids[c[4]], limits[c[2]], int(settled), int(held)}
  end
  held_fields[#held_fields + 1] = c[1] .. '|h'
  held_fields[#held_fields + 1] = int(held + amount)
  counters[#counters + 1] = c[1]
end
local names = table.concat(counters, ',')
local created, deadline = ts(now), ts(now + lease)
local rec = {s = 'held', a = ARGV[2], c = '0', t = created, d = deadline, o = '0', l = '0',
  ch = table.concat(ARGV, ',', 9), k = names, v = ARGV[4], m = ARGV[5], p = ARGV[6]}
-- HSETNX writes the record only for a new key: a retried reserve replays before anything moved.
if redis.call('HSETNX', K_RES, key, dump(rec)) == 0 then return replayed() end
redis.call('HSET', K_CNT, unpack(held_fields))
redis.call('ZADD', K_LEASE, now + lease, key)
event('reserve', key, names, amount, 0, now)
return {'ok', created, deadline, names}
"""

# ARGV: key, cost, refund (0|1), now|''
# Reply: {'ok', record, status rows of the record's chain (as STATUS)}, {'replay', record} or {'unknown'}.
SETTLE = PRELUDE + r"""
local key, cost = ARGV[1], tonumber(ARGV[2])
local now = clock(ARGV[4])
local raw = redis.call('HGET', K_RES, key)
if not raw then return {'unknown'} end
local rec = load(raw)
local amount = tonumber(rec.a)
local state = (ARGV[3] == '1') and 'refunded' or 'settled'
local kind = (ARGV[3] == '1') and 'refund' or 'settle'
if rec.s == 'held' then
  move(rec.k, -amount, cost)
  event(kind, key, rec.k, -amount, cost, now)
elseif rec.s == 'expired' then
  if cost ~= amount then move(rec.k, 0, cost - amount) end
  event(kind, key, rec.k, 0, cost - amount, now)
  rec.l = '1'
else
  return {'replay', raw}
end
rec.s = state
rec.c = ARGV[2]
if cost > amount then rec.o = '1' end
raw = dump(rec)
redis.call('HSET', K_RES, key, raw)
redis.call('ZREM', K_LEASE, key)
-- The chain's counters as this settlement left them: what a gateway reports as left, without another call.
local chain = {}
for scope in string.gmatch(rec.ch, '[^,]+') do chain[#chain + 1] = scope end
return {'ok', raw, chain_status(chain, now)}
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
  if gone > 0 then event('limit', ARGV[1], '', 0, 0, now, ARGV[2] .. '=removed') end
  return gone
end
redis.call('HSET', K_LIM, field, ARGV[3])
event('limit', ARGV[1], '', 0, 0, now, ARGV[2] .. '=' .. ARGV[3])
return 1
"""

# ARGV: scope, window, now|''
RESET = PRELUDE + r"""
local now = clock(ARGV[3])
local name = ARGV[1] .. '|' .. ARGV[2] .. '|' .. wid(ARGV[2], now)
local settled = tonumber(redis.call('HGET', K_CNT, name .. '|s') or '0')
local counters = ''
if settled ~= 0 then
  counters = name
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

# The current window of each limit of the scopes ARGV[2..] (what a caller asks per request).
STATUS = PRELUDE + r"""
return chain_status({unpack(ARGV, 2)}, clock(ARGV[1]))
"""

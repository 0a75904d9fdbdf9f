-- hortus.lua: a client of the hortus advisor for Lua 5.4, speaking Connect JSON over plain
-- HTTP POST to the web port of `hortus serve --web-address` (POST /hortus.v1.Advisor/<Method>,
-- Content-Type: application/json; the answer is the response message as proto3 JSON).
-- Needs LuaSocket and lua-cjson (Debian: lua-socket, lua-cjson).
--
--   local hortus = require("hortus")
--   local advisor = hortus.new("http://127.0.0.1:8080")
--   local info = advisor:new_game("botanik", {seed = 7})
--   local legal = advisor:legal_actions(info.position, {for_seat = 0})
--
-- Proto3 JSON leaves out fields at their default (0, false, ""): `current_player` 0 and
-- `terminal` false are absent, so read them through the helpers here (hortus.seat_to_move,
-- hortus.is_terminal) or with `or 0` / `or false`. 64-bit counts (visits, iterations, seeds)
-- arrive as strings: tonumber() them.
-- A failed call raises a table {code = "invalid_argument", message = ..., details = {...}}
-- (the Connect error JSON; code "unavailable" when the server cannot be reached); catch it
-- with pcall.

local http = require("socket.http")
local ltn12 = require("ltn12")
local cjson = require("cjson")

local M = {}
M.SERVICE = "hortus.v1.Advisor"

local Advisor = {}
Advisor.__index = Advisor

--- An advisor at `base_url` (the web port, e.g. "http://127.0.0.1:8080"). opts.timeout:
--- seconds a call may take (default 60; LuaSocket's socket timeout), also sent as the
--- Connect deadline (Connect-Timeout-Ms).
function M.new(base_url, opts)
  opts = opts or {}
  return setmetatable({base_url = base_url:gsub("/+$", ""), timeout = opts.timeout or 60}, Advisor)
end

local function error_object(status, body, transport_error)
  if transport_error then
    return {code = "unavailable", message = "the server could not be reached: " .. tostring(transport_error)}
  end
  local ok, decoded = pcall(cjson.decode, body or "")
  if ok and type(decoded) == "table" and decoded.code then
    decoded.http_status = status
    return decoded
  end
  return {code = "unknown", http_status = status, message = "HTTP " .. tostring(status) .. ": " .. tostring(body)}
end

M.error_mt = {__tostring = function(e) return (e.code or "unknown") .. ": " .. (e.message or "") end}

local function raise(e)
  error(setmetatable(e, M.error_mt), 2)
end

--- One POST of `request` (a table, encoded as JSON) to `method`, the body written to `sink`.
function Advisor:_post(method, request, content_type, sink)
  local body = cjson.encode(request)
  http.TIMEOUT = self.timeout
  local ok, status, headers = http.request({
    url = self.base_url .. "/" .. M.SERVICE .. "/" .. method,
    method = "POST",
    headers = {
      ["content-type"] = content_type,
      ["accept"] = content_type,
      ["content-length"] = tostring(#body),
      ["connect-protocol-version"] = "1",
      ["connect-timeout-ms"] = tostring(math.floor(self.timeout * 1000)),
    },
    source = ltn12.source.string(body),
    sink = sink,
  })
  if not ok then return nil, status end   -- transport error: `status` is its message
  return status, headers
end

--- A unary call: the response message (a table), or raises the error object.
function Advisor:call(method, request)
  local chunks = {}
  local status, err = self:_post(method, request, "application/json", ltn12.sink.table(chunks))
  local body = table.concat(chunks)
  if status == nil then raise(error_object(nil, nil, err)) end
  if status ~= 200 then raise(error_object(status, body)) end
  return cjson.decode(body)
end

local function limits(opts)
  return {
    iterations = opts.iterations, timeMs = opts.time_ms, seed = opts.seed, threads = opts.threads,
    allowActions = opts.allow, avoidActions = opts.avoid,
  }
end

--- A new game: the PositionInfo (position, scores, returns, rendered, ...). opts: players
--- (0 = the game's default), seed (deals the setup; without it the game waits at the setup
--- chance node), variant, options (a table of rule options).
function Advisor:new_game(game, opts)
  opts = opts or {}
  local request = {game = game, players = opts.players, seed = opts.seed, variant = opts.variant}
  if opts.options and next(opts.options) then request.options = opts.options end
  return self:call("NewGame", request).info
end

--- The legal decisions or chance outcomes. opts.for_seat: only what that seat may know;
--- opts.picture: also the SVG picture of what it sees, opts.highlight (action ids) marked.
function Advisor:legal_actions(position, opts)
  opts = opts or {}
  local answer = self:call("LegalActions", {
    position = position, forSeat = opts.for_seat, picture = opts.picture, highlight = opts.highlight,
  })
  answer.actions = answer.actions or {}
  answer.chanceOutcomes = answer.chanceOutcomes or {}
  answer.currentPlayer = answer.currentPlayer or 0
  answer.terminal = answer.terminal or false
  return answer
end

--- An action reference from an id (number), a notation (string), or {draw_seed = n} (a
--- chance outcome the server draws with the position's own odds).
function M.ref(action)
  if type(action) == "number" then return {id = action} end
  if type(action) == "string" then return {notation = action} end
  if action.draw_seed then return {drawSeed = tostring(action.draw_seed)} end
  if action.id then return {id = action.id} end
  return {notation = action.notation}
end

--- Applies `actions` (ids, notations, Action tables or {draw_seed = n}) in order: the new
--- PositionInfo, and the applied Actions (with their notation) as a second value.
function Advisor:apply_actions(position, actions)
  local refs = {}
  for i, a in ipairs(actions) do refs[i] = M.ref(a) end
  local answer = self:call("ApplyActions", {position = position, actions = refs})
  return answer.info, answer.applied or {}
end

--- The AI's move: {action, turn, analysis, continuation}. opts.level 1-8 (a difficulty
--- level), or opts.target_elo, or a budget (iterations / time_ms); seed, threads.
function Advisor:suggest_move(position, opts)
  opts = opts or {}
  return self:call("SuggestMove", {
    position = position, limits = limits(opts), level = opts.level, targetElo = opts.target_elo,
    continueFrom = opts.continue_from,
  })
end

--- Hints: every searched move, most visited first (the first opts.max_moves; 0 = all), as
--- the Analysis {seat, moves = {{action, visits, winProbability, ...}}, iterations, ...}.
function Advisor:rank_moves(position, opts)
  opts = opts or {}
  local answer = self:call("RankMoves", {position = position, limits = limits(opts), maxMoves = opts.max_moves})
  answer.analysis.moves = answer.analysis.moves or {}
  return answer.analysis
end

function Advisor:list_games()
  return self:call("ListGames", {}).games or {}
end

--- Splits what a sink receives into lines: `on_line(line)` for each complete one.
local function line_sink(on_line)
  local pending = ""
  return function(chunk)
    if chunk == nil then
      if pending ~= "" then on_line(pending) end
      return 1
    end
    pending = pending .. chunk
    while true do
      local newline = pending:find("\n", 1, true)
      if not newline then break end
      local line = pending:sub(1, newline - 1):gsub("\r$", "")
      pending = pending:sub(newline + 1)
      if line ~= "" then on_line(line) end
    end
    return 1
  end
end

--- A server stream read line by line as it runs (the web port's NDJSON form: POST with
--- Content-Type application/x-ndjson, one JSON object per line). Every line {"result": message}
--- goes to `on_result(message)` as it arrives; exactly one last line {"end": {"code": "ok"}}
--- ends the stream, or {"end": <error JSON>} when the call failed (raised here as a unary
--- call's error); a stream without an end line was cut (raised as "unavailable").
function Advisor:stream(method, request, on_result)
  local ended = nil
  local function on_line(line)
    local message = cjson.decode(line)
    if message["end"] ~= nil then
      ended = message["end"]
    elseif message.result ~= nil then
      on_result(message.result)
    end
  end
  local chunks = {}
  local lines = line_sink(on_line)
  local status, err = self:_post(method, request, "application/x-ndjson", function(chunk, e)
    if chunk then chunks[#chunks + 1] = chunk end
    return lines(chunk, e)
  end)
  if status == nil then raise(error_object(nil, nil, err)) end
  if status ~= 200 then raise(error_object(status, table.concat(chunks))) end
  if ended == nil then raise({code = "unavailable", message = "the stream was cut before its end line"}) end
  if ended.code ~= "ok" then raise(ended) end
end

--- Analyze, read as it runs (see Advisor:stream): every AnalyzeResponse goes to
--- `on_update(message)` as it arrives. opts as rank_moves, plus interval_ms (a partial result
--- every so many milliseconds of search). Returns the final AnalyzeResponse.
function Advisor:analyze(position, opts, on_update)
  opts = opts or {}
  local final = nil
  self:stream("Analyze", {
    position = position, limits = limits(opts), intervalMs = opts.interval_ms, maxMoves = opts.max_moves,
    continueFrom = opts.continue_from,
  }, function(response)
    response.analysis = response.analysis or {}
    response.analysis.moves = response.analysis.moves or {}
    if response.final then final = response end
    if on_update then on_update(response) end
  end)
  if final == nil then raise({code = "unknown", message = "the stream ended without a final analysis"}) end
  return final
end

--- A balance report (SimulateGames, read as it runs; see Advisor:stream): `games` seeded
--- self-play games per seat count, every seat played at one difficulty level. opts: players
--- (a list of seat counts, each once; none = the game's minimum), level (1..8; 0 or none = 4),
--- seed, options (a table of rule options). Each finished game goes to `on_game(game)` (a
--- SimulatedGame: gameId "<players>:<number>", players, number, scores, decisions, gamesDone,
--- gamesTotal; each game once, in completion order). Returns the report as `hortus balance`
--- writes report.json: its text, byte for byte, and decoded. A bad argument raises
--- invalid_argument naming the field before any game is played; past the advisor's timeout
--- the call ends deadline_exceeded, after the games finished by then.
function Advisor:simulate_games(game, games, opts, on_game)
  opts = opts or {}
  local request = {game = game, games = games, level = opts.level, seed = opts.seed}
  -- an empty Lua table would encode as a JSON object, which a repeated field refuses
  if opts.players and #opts.players > 0 then request.players = opts.players end
  if opts.options and next(opts.options) then request.options = opts.options end
  local report = nil
  self:stream("SimulateGames", request, function(item)
    if item.reportJson ~= nil then
      report = item.reportJson
    elseif item.game ~= nil and on_game then
      on_game(item.game)
    end
  end)
  if report == nil then raise({code = "unknown", message = "the stream ended without a report"}) end
  return report, cjson.decode(report)
end

--- The seat to decide (-1 chance, -4 terminal; proto3 JSON leaves out 0).
function M.seat_to_move(info) return info.currentPlayer or 0 end
function M.is_terminal(info) return info.terminal == true end

return M

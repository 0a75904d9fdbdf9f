-- A whole game of Botanik against the AI at level 2, from Lua: seat 0 asks for hints
-- (RankMoves) and plays the best one, seat 1 is the AI (SuggestMove at level 2), the server
-- deals the chance draws (draw_seed). Prints every move in notation and the final returns.
--   lua5.4 play_botanik.lua http://127.0.0.1:8080 [seed]
local here = arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/?.lua;" .. package.path
local hortus = require("hortus")

local url = arg[1] or "http://127.0.0.1:8080"
local seed = tonumber(arg[2] or "1")
local advisor = hortus.new(url)
local HUMAN, AI_LEVEL, HINT_ITERATIONS = 0, 2, 64

local info = advisor:new_game("botanik", {players = 2, seed = seed})
local position, draws, decisions, hints = info.position, 0, 0, 0
print(("botanik, seed %d: you are seat %d, the AI plays at level %d"):format(seed, HUMAN, AI_LEVEL))
while true do
  local legal = advisor:legal_actions(position)
  if legal.terminal then break end
  local action
  if legal.currentPlayer < 0 then
    draws = draws + 1
    action = {draw_seed = seed * 100003 + draws}
  elseif legal.currentPlayer == HUMAN then
    local analysis = advisor:rank_moves(position, {iterations = HINT_ITERATIONS, seed = decisions, max_moves = 3})
    hints = hints + 1
    local best = analysis.moves[1]
    local shown = {}
    for i, move in ipairs(analysis.moves) do
      shown[i] = ("%s %.0f%%"):format(move.action.notation, 100 * (move.winProbability or 0))
    end
    print("hints: " .. table.concat(shown, ", "))
    action = best.action.id
  else
    local suggestion = advisor:suggest_move(position, {level = AI_LEVEL, seed = decisions})
    action = suggestion.action.id
  end
  local seat = legal.currentPlayer
  local applied
  info, applied = advisor:apply_actions(position, {action})
  position = info.position
  if seat >= 0 then
    decisions = decisions + 1
    print(("seat %d plays %s"):format(seat, applied[1].notation))
  end
end
local scores, returns = {}, {}
for i, v in ipairs(info.scores or {}) do scores[i] = tostring(v) end
for i, v in ipairs(info.returns or {}) do returns[i] = tostring(v) end
print(("game over after %d decisions, %d hints, %d draws"):format(decisions, hints, draws))
print("scores: " .. table.concat(scores, " "))
print("returns: " .. table.concat(returns, " "))

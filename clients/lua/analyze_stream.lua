-- Analyze read line by line (NDJSON): every partial analysis printed as it arrives, then the
-- final one (a one-second search, an update every 100 ms).   lua5.4 analyze_stream.lua http://127.0.0.1:8080 [game]
local here = arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/?.lua;" .. package.path
local hortus = require("hortus")

local advisor = hortus.new(arg[1] or "http://127.0.0.1:8080")
local info = advisor:new_game(arg[2] or "botanik", {players = 2, seed = 3})
local updates = 0
local final = advisor:analyze(info.position, {time_ms = 1000, seed = 1, interval_ms = 100, max_moves = 3},
  function(message)
    updates = updates + 1
    local best = message.analysis.moves[1]
    print(("update %d: %s iterations, final %s, best %s"):format(updates, tostring(message.analysis.iterations),
      tostring(message.final == true), best and best.action.notation or "-"))
  end)
print(("final after %d updates: %s iterations"):format(updates, tostring(final.analysis.iterations)))

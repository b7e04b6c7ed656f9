%% pairs K N — Erlang/OTP peer of actorc's benchmark (see bench/README.md).
%% K independent ping-pong pairs (as in pingpong) play N round trips each,
%% all at once. Messages counted: 2*K*N. Verified: every pinger counted N.
-module(pairs).
-export([main/1]).

main(Args) ->
    bench_peer:run("pairs", "K N", Args, fun([K, N]) -> bench(K, N) end).

bench(K, N) ->
    Self = self(),
    Pingers = [begin
                   Ponger = spawn(fun ponger/0),
                   spawn(fun() -> receive go -> pinger(Ponger, N, 0, Self) end end)
               end || _ <- lists:seq(1, K)],
    T0 = bench_peer:now_ns(),
    [P ! go || P <- Pingers],
    Counts = [receive {done, C} -> C end || _ <- Pingers],
    Ns = bench_peer:now_ns() - T0,
    Good = length([C || C <- Counts, C =:= N]),
    Good =:= K orelse
        bench_peer:fail("~B of ~B pingers counted ~B", [Good, K, N]),
    bench_peer:report("pairs", [K, N], Ns, 2 * K * N).

ponger() ->
    receive
        {ping, From} -> From ! pong, ponger()
    end.

pinger(_Ponger, N, N, Reporter) ->
    Reporter ! {done, N};
pinger(Ponger, N, Pongs, Reporter) ->
    Ponger ! {ping, self()},
    receive
        pong -> pinger(Ponger, N, Pongs + 1, Reporter)
    end.

%% pingpong N — Erlang/OTP peer of actorc's benchmark (see bench/README.md).
%% Two processes; the pinger sends {ping, self()}, the ponger answers pong,
%% N round trips. Messages counted: 2N. Verified: the pinger counted N pongs.
-module(pingpong).
-export([main/1]).

main(Args) ->
    bench_peer:run("pingpong", "N", Args, fun([N]) -> bench(N) end).

bench(N) ->
    Self = self(),
    Ponger = spawn(fun ponger/0),
    Pinger = spawn(fun() -> receive go -> pinger(Ponger, N, 0, Self) end end),
    T0 = bench_peer:now_ns(),
    Pinger ! go,
    Counted = receive {done, C} -> C end,
    Ns = bench_peer:now_ns() - T0,
    Counted =:= N orelse
        bench_peer:fail("pinger counted ~B pongs, expected ~B", [Counted, N]),
    bench_peer:report("pingpong", [N], Ns, 2 * N).

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

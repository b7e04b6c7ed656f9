%% spawn N — Erlang/OTP peer of actorc's benchmark (see bench/README.md).
%% A spawner process spawns N processes and sends each one message (its
%% number, 1..N); each answers the spawner with it and ends. Counted: N
%% processes. Verified: N answers whose sum is N(N+1)/2. run.sh raises the
%% process limit (+P) for it, as for skynet: the spawner can get ahead of
%% the children's ends.
-module(spawn).
-export([main/1]).

main(Args) ->
    bench_peer:run("spawn", "N", Args, fun([N]) -> bench(N) end).

bench(N) ->
    Self = self(),
    T0 = bench_peer:now_ns(),
    Spawner = spawn(fun() -> spawner(N, Self) end),
    {Done, Sum} = receive {result, Spawner, D, S} -> {D, S} end,
    Ns = bench_peer:now_ns() - T0,
    Done =:= N andalso Sum =:= N * (N + 1) div 2 orelse
        bench_peer:fail("~B children answered (want ~B), sum ~B (want ~B)",
                        [Done, N, Sum, N * (N + 1) div 2]),
    bench_peer:report("spawn", [N], Ns, N).

spawner(N, Main) ->
    Me = self(),
    launch(1, N, Me),
    {D, S} = collect(N, 0, 0),
    Main ! {result, Me, D, S}.

launch(I, N, _Me) when I > N -> ok;
launch(I, N, Me) ->
    P = spawn(fun child/0),
    P ! {work, Me, I},
    launch(I + 1, N, Me).

child() ->
    receive {work, To, X} -> To ! {done, X} end.

collect(0, D, S) -> {D, S};
collect(K, D, S) -> receive {done, X} -> collect(K - 1, D + 1, S + X) end.

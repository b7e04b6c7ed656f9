%% skynet D — Erlang/OTP peer of actorc's benchmark (see bench/README.md).
%% The root process spawns 10 children, each spawns 10, down to depth D
%% (10^D leaves); leaf I replies its number I, parents sum their children's
%% replies and reply to their parent; every process ends after replying.
%% Messages counted: one spawn and one reply per process
%% (2 * (10^(D+1)-1)/9). Verified: the root's sum is the sum of 0 .. 10^D-1.
-module(skynet).
-export([main/1]).

main(Args) ->
    bench_peer:run("skynet", "D", Args, fun([D]) -> bench(D) end).

bench(D) ->
    D =< 9 orelse
        begin io:format(standard_error, "skynet: D must be at most 9~n", []),
              erlang:halt(2) end,
    Leaves = pow10(D),
    Procs = (10 * Leaves - 1) div 9,
    Self = self(),
    T0 = bench_peer:now_ns(),
    spawn(fun() -> skynet(Self, 0, 0, D) end),
    Sum = receive {sum, S} -> S end,
    Ns = bench_peer:now_ns() - T0,
    Expected = Leaves * (Leaves - 1) div 2,
    Sum =:= Expected orelse
        bench_peer:fail("root's sum ~B, expected ~B", [Sum, Expected]),
    bench_peer:report("skynet", [D], Ns, 2 * Procs).

skynet(Parent, Num, Depth, Depth) ->
    Parent ! {sum, Num};
skynet(Parent, Num, Level, Depth) ->
    Self = self(),
    [spawn(fun() -> skynet(Self, Num * 10 + I, Level + 1, Depth) end)
     || I <- lists:seq(0, 9)],
    Parent ! {sum, collect(10, 0)}.

collect(0, Sum) -> Sum;
collect(N, Sum) -> receive {sum, S} -> collect(N - 1, Sum + S) end.

pow10(0) -> 1;
pow10(N) -> 10 * pow10(N - 1).

%% ring_multi R K T — Erlang/OTP peer of actorc's benchmark (bench/README.md).
%% The ring of `ring`, with K tokens started at processes J*R div K (J < K),
%% each making T/K hops (decremented per hop; the process that receives 0
%% reports). Messages counted: T. Verified: K reports, each from the process
%% its token must end at, and afterwards (not timed) the receive counters sum
%% to T + K.
-module(ring_multi).
-export([main/1]).

main(Args) ->
    bench_peer:run("ring_multi", "R K T", Args,
                   fun([R, K, T]) -> bench(R, K, T) end).

bench(R, K, T) ->
    T rem K =:= 0 orelse
        begin io:format(standard_error, "ring_multi: K must divide T~n", []),
              erlang:halt(2) end,
    Hops = T div K,
    Ring = ring:make_ring(R, self()),
    Starts = [J * R div K || J <- lists:seq(0, K - 1)],
    T0 = bench_peer:now_ns(),
    [element(S + 1, Ring) ! Hops || S <- Starts],
    Reporters = [receive {done, I} -> I end || _ <- Starts],
    Ns = bench_peer:now_ns() - T0,
    Received = ring:collect_counts(Ring),
    Expected = lists:sort([(S + Hops) rem R || S <- Starts]),
    lists:sort(Reporters) =:= Expected orelse
        bench_peer:fail("the tokens did not end where they must", []),
    Received =:= T + K orelse
        bench_peer:fail("~B receives, expected ~B", [Received, T + K]),
    bench_peer:report("ring_multi", [R, K, T], Ns, T).

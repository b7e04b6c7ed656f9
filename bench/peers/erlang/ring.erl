%% ring R T — Erlang/OTP peer of actorc's benchmark (see bench/README.md).
%% R processes in a ring; one token (an integer) is passed T times, each hop
%% decrementing it; the process that receives 0 reports.
%% Messages counted: T. Verified: the reporter is process T rem R (the token
%% started at process 0), and afterwards (not timed) the processes' receive
%% counters sum to T + 1 (T hops plus the starting send).
-module(ring).
-export([main/1, make_ring/2, node/3, collect_counts/1]).

main(Args) ->
    bench_peer:run("ring", "R T", Args, fun([R, T]) -> bench(R, T) end).

bench(R, T) ->
    Ring = make_ring(R, self()),
    T0 = bench_peer:now_ns(),
    element(1, Ring) ! T,
    Reporter = receive {done, I} -> I end,
    Ns = bench_peer:now_ns() - T0,
    Received = collect_counts(Ring),
    Reporter =:= T rem R orelse
        bench_peer:fail("process ~B reported, expected ~B", [Reporter, T rem R]),
    Received =:= T + 1 orelse
        bench_peer:fail("~B receives, expected ~B", [Received, T + 1]),
    bench_peer:report("ring", [R, T], Ns, T).

%% Spawns R nodes, tells each its successor and waits for their acks;
%% returns them as a tuple.
make_ring(R, Reporter) ->
    Pids = [spawn(?MODULE, node, [I, Reporter, 0]) || I <- lists:seq(0, R - 1)],
    [First | Rest] = Pids,
    Self = self(),
    lists:foreach(fun({P, Next}) -> P ! {next, Next, Self} end,
                  lists:zip(Pids, Rest ++ [First])),
    %% setup is not timed: wait until every node knows its successor
    [receive {ready, P} -> ok end || P <- Pids],
    list_to_tuple(Pids).

node(I, Reporter, 0) ->
    receive
        {next, Next, From} ->
            From ! {ready, self()},
            loop(Next, I, Reporter, 0)
    end.

loop(Next, I, Reporter, Received) ->
    receive
        0 ->
            Reporter ! {done, I},
            loop(Next, I, Reporter, Received + 1);
        Token when is_integer(Token) ->
            Next ! Token - 1,
            loop(Next, I, Reporter, Received + 1);
        {count, From} ->
            From ! {count, Received},
            loop(Next, I, Reporter, Received)
    end.

%% Not timed: asks every node how many tokens it received and sums them.
collect_counts(Ring) ->
    Pids = tuple_to_list(Ring),
    [P ! {count, self()} || P <- Pids],
    lists:sum([receive {count, C} -> C end || _ <- Pids]).

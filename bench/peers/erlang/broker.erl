%% broker P N — Erlang/OTP peer of actorc's benchmark (see bench/README.md).
%% A broker process pairs up P worker processes that keep coming back to
%% it: a worker asks for a partner ({want, Id}); the broker keeps the first
%% and, when a second comes, tells each the other's id; each greets its
%% partner, and on the partner's greeting goes back to the broker. After
%% P*N/2 meetings the broker sends everyone who comes back home. Counted:
%% P*N/2 meetings. Verified: that many meetings, 2 pairings and 2
%% greetings each, and all P workers sent home.
-module(broker).
-export([main/1]).

main(Args) ->
    bench_peer:run("broker", "P N", Args, fun([P, N]) -> bench(P, N) end).

bench(P, _N) when P < 2 -> bench_peer:fail("P must be 2 or more", []);
bench(P, N) ->
    Self = self(),
    Target = P * N div 2,
    Broker = spawn(fun() -> receive {workers, W} -> broker(W, Target, 0, none, 0, Self) end end),
    Pids = [spawn(fun() -> receive {workers, W} -> worker(Id, Broker, W, 0, 0, Self) end end)
            || Id <- lists:seq(0, P - 1)],
    Workers = list_to_tuple(Pids),
    T0 = bench_peer:now_ns(),
    Broker ! {workers, Workers},
    [W ! {workers, Workers} || W <- Pids],
    Meetings = receive {held, Broker, M} -> M end,
    Counts = [receive {count, W, Met, Hellos} -> {Met, Hellos} end || W <- Pids],
    Ns = bench_peer:now_ns() - T0,
    Met = lists:sum([X || {X, _} <- Counts]),
    Hellos = lists:sum([Y || {_, Y} <- Counts]),
    Meetings =:= Target andalso Met =:= 2 * Target andalso Hellos =:= 2 * Target orelse
        bench_peer:fail("~B meetings (want ~B), ~B paired and ~B greeted (want ~B each)",
                        [Meetings, Target, Met, Hellos, 2 * Target]),
    bench_peer:report("broker", [P, N], Ns, Target).

%% Once the meetings are held, whoever comes back is sent home: nobody is
%% left waiting for a partner who will not come.
broker(W, Target, Target, _Waiting, Stopped, Main) ->
    receive
        {want, Id} ->
            element(Id + 1, W) ! done,
            case Stopped + 1 of
                S when S =:= tuple_size(W) -> Main ! {held, self(), Target};
                S -> broker(W, Target, Target, none, S, Main)
            end
    end;
broker(W, Target, Meetings, none, Stopped, Main) ->
    receive {want, Id} -> broker(W, Target, Meetings, Id, Stopped, Main) end;
broker(W, Target, Meetings, Waiting, Stopped, Main) ->
    receive
        {want, Id} ->
            element(Waiting + 1, W) ! {paired, Id},
            element(Id + 1, W) ! {paired, Waiting},
            broker(W, Target, Meetings + 1, none, Stopped, Main)
    end.

worker(Id, Broker, W, Met, Hellos, Main) ->
    Broker ! {want, Id},
    worker_wait(Id, Broker, W, Met, Hellos, Main).

%% The partner's greeting may come before the broker's {paired, ...}
%% (two senders): both are counted, whichever comes first. When the
%% broker sends a worker home, every greeting of its meetings has come.
worker_wait(Id, Broker, W, Met, Hellos, Main) ->
    receive
        {paired, Partner} ->
            element(Partner + 1, W) ! {hello, Id},
            worker_wait(Id, Broker, W, Met + 1, Hellos, Main);
        {hello, _From} ->
            worker(Id, Broker, W, Met, Hellos + 1, Main);
        done ->
            Main ! {count, self(), Met, Hellos}
    end.

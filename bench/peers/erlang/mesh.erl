%% mesh A T H — Erlang/OTP peer of actorc's benchmark (see bench/README.md).
%% A processes; each sends T tokens to random processes (xorshift32, seeded
%% Id * 2654435761 + 1, the same generator as actorc's); a token is sent H
%% times in all, each receiver forwarding it to a random process until its
%% count runs out. Messages counted: A*T*H. Verified: A*T tokens finished
%% and the receive counts sum to A*T*H.
-module(mesh).
-export([main/1]).

main(Args) ->
    bench_peer:run("mesh", "A T H", Args, fun([A, T, H]) -> bench(A, T, H) end).

bench(A, T, H) ->
    Self = self(),
    Pids = [spawn(fun() -> receive {peers, Peers} -> launch(Id, Peers, A, T, H, Self) end end)
            || Id <- lists:seq(0, A - 1)],
    Peers = list_to_tuple(Pids),
    T0 = bench_peer:now_ns(),
    [P ! {peers, Peers} || P <- Pids],
    wait_fins(A * T),
    Ns = bench_peer:now_ns() - T0,
    [P ! {report, Self} || P <- Pids],
    Counts = [receive {count, P, R, F} -> {R, F} end || P <- Pids],
    Received = lists:sum([R || {R, _} <- Counts]),
    Finished = lists:sum([F || {_, F} <- Counts]),
    Received =:= A * T * H andalso Finished =:= A * T orelse
        bench_peer:fail("~B messages received (want ~B), ~B tokens finished (want ~B)",
                        [Received, A * T * H, Finished, A * T]),
    bench_peer:report("mesh", [A, T, H], Ns, A * T * H).

wait_fins(0) -> ok;
wait_fins(N) -> receive fin -> wait_fins(N - 1) end.

xorshift(X0) ->
    X1 = (X0 bxor (X0 bsl 13)) band 16#FFFFFFFF,
    X2 = X1 bxor (X1 bsr 17),
    (X2 bxor (X2 bsl 5)) band 16#FFFFFFFF.

seed(Id) ->
    case (Id * 2654435761 + 1) band 16#FFFFFFFF of 0 -> 1; S -> S end.

launch(Id, Peers, A, T, H, Main) ->
    Rng = send_tokens(Peers, A, seed(Id), T, H - 1),
    node(Peers, A, Rng, 0, 0, Main).

send_tokens(_Peers, _A, Rng, 0, _Left) -> Rng;
send_tokens(Peers, A, Rng, K, Left) ->
    R = xorshift(Rng),
    element(R rem A + 1, Peers) ! {token, Left},
    send_tokens(Peers, A, R, K - 1, Left).

node(Peers, A, Rng, Received, Finished, Main) ->
    receive
        {token, 0} ->
            Main ! fin,
            node(Peers, A, Rng, Received + 1, Finished + 1, Main);
        {token, Left} ->
            R = xorshift(Rng),
            element(R rem A + 1, Peers) ! {token, Left - 1},
            node(Peers, A, R, Received + 1, Finished, Main);
        {report, To} ->
            To ! {count, self(), Received, Finished}
    end.

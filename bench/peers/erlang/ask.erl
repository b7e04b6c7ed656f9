%% ask C R — Erlang/OTP peer of actorc's benchmark (see bench/README.md).
%% One teller process holds C accounts; C client processes each make R
%% requests of it, one in flight at a time per client, as gen_server:call
%% does: a fresh ref in the request, a selective receive on it for the
%% reply. The k-th deposit (amount k) must be answered with the running
%% sum k(k+1)/2. Messages counted: C*R request/reply pairs. Verified: every
%% reply, and every account at R(R+1)/2.
-module(ask).
-export([main/1]).

main(Args) ->
    bench_peer:run("ask", "C R", Args, fun([C, R]) -> bench(C, R) end).

bench(C, R) ->
    Self = self(),
    Teller = spawn(fun() -> teller(#{}) end),
    Pids = [spawn(fun() -> receive go -> client(Teller, Id, 1, R, 0, Self) end end)
            || Id <- lists:seq(0, C - 1)],
    T0 = bench_peer:now_ns(),
    [P ! go || P <- Pids],
    Bad = lists:sum([receive {done, P, B} -> B end || P <- Pids]),
    Ns = bench_peer:now_ns() - T0,
    Want = R * (R + 1) div 2,
    Ref = make_ref(),
    Teller ! {accounts, Self, Ref},
    Accounts = receive {Ref, M} -> M end,
    Short = length([I || I <- lists:seq(0, C - 1), maps:get(I, Accounts, 0) =/= Want]),
    Bad =:= 0 andalso Short =:= 0 orelse
        bench_peer:fail("~B replies not the running sum, ~B accounts not at ~B",
                        [Bad, Short, Want]),
    bench_peer:report("ask", [C, R], Ns, C * R).

teller(Accounts) ->
    receive
        {deposit, From, Ref, Id, Amount} ->
            B = maps:get(Id, Accounts, 0) + Amount,
            From ! {Ref, B},
            teller(Accounts#{Id => B});
        {accounts, From, Ref} ->
            From ! {Ref, Accounts}
    end.

client(_Teller, _Id, K, R, Bad, Main) when K > R ->
    Main ! {done, self(), Bad};
client(Teller, Id, K, R, Bad, Main) ->
    Ref = make_ref(),
    Teller ! {deposit, self(), Ref, Id, K},
    receive
        {Ref, B} ->
            Bad1 = case B =:= K * (K + 1) div 2 of true -> Bad; false -> Bad + 1 end,
            client(Teller, Id, K + 1, R, Bad1, Main)
    end.

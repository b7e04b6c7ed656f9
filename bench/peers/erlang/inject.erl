%% inject A M — Erlang/OTP peer of actorc's benchmark (see bench/README.md).
%% The main process (Erlang has no non-actor thread: the one `erl -run`
%% starts) sends M messages {work, X} to each of A workers, round-robin,
%% X = 0 .. M-1; each worker checks X is its next number and adds X*X.
%% Messages counted: A*M. Verified: every worker handled M, in order, and
%% its sum is 0^2 + ... + (M-1)^2.
-module(inject).
-export([main/1]).

main(Args) ->
    bench_peer:run("inject", "A M", Args, fun([A, M]) -> bench(A, M) end).

bench(A, M) ->
    Self = self(),
    Workers = [spawn(fun() -> worker(Id, M, 0, 0, 0, Self) end) || Id <- lists:seq(0, A - 1)],
    T0 = bench_peer:now_ns(),
    send_all(Workers, 0, M),
    Results = [receive {done, Id, Next, Bad, Acc} -> {Next, Bad, Acc} end
               || Id <- lists:seq(0, A - 1)],
    Ns = bench_peer:now_ns() - T0,
    Want = lists:sum([X * X || X <- lists:seq(0, M - 1)]),
    lists:all(fun(R) -> R =:= {M, 0, Want} end, Results) orelse
        bench_peer:fail("workers' counts, disorder and sums ~p, want ~p",
                        [Results, {M, 0, Want}]),
    bench_peer:report("inject", [A, M], Ns, A * M).

send_all(_Workers, M, M) -> ok;
send_all(Workers, X, M) ->
    [W ! {work, X} || W <- Workers],
    send_all(Workers, X + 1, M).

worker(Id, M, M, Bad, Acc, Reporter) ->
    Reporter ! {done, Id, M, Bad, Acc};
worker(Id, M, Next, Bad, Acc, Reporter) ->
    receive
        {work, Next} -> worker(Id, M, Next + 1, Bad, Acc + Next * Next, Reporter);
        {work, X} -> worker(Id, M, Next + 1, Bad + 1, Acc + X * X, Reporter)
    end.

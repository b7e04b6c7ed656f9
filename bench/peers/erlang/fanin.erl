%% fanin P M — Erlang/OTP peer of actorc's benchmark (see bench/README.md).
%% P producers each send M messages {Id, Seq} to one consumer.
%% Messages counted: P*M. Verified: the consumer counted P*M and saw each
%% producer's sequence numbers in order.
-module(fanin).
-export([main/1]).

main(Args) ->
    bench_peer:run("fanin", "P M", Args, fun([P, M]) -> bench(P, M) end).

bench(P, M) ->
    Self = self(),
    Next = maps:from_list([{I, 0} || I <- lists:seq(0, P - 1)]),
    %% Producers outrun the one consumer, so its mailbox grows large: keep it
    %% off the heap, as the OTP docs advise, so collections do not scan it.
    Consumer = spawn_opt(fun() -> consumer(P * M, 0, 0, Next, Self) end,
                         [{message_queue_data, off_heap}]),
    Producers = [spawn(fun() -> receive go -> produce(Consumer, I, 0, M) end end)
                 || I <- lists:seq(0, P - 1)],
    T0 = bench_peer:now_ns(),
    [Pid ! go || Pid <- Producers],
    {Count, Bad} = receive {done, C, B} -> {C, B} end,
    Ns = bench_peer:now_ns() - T0,
    Count =:= P * M andalso Bad =:= 0 orelse
        bench_peer:fail("consumer counted ~B of ~B, ~B out of order",
                        [Count, P * M, Bad]),
    bench_peer:report("fanin", [P, M], Ns, P * M).

produce(_Consumer, _Id, M, M) -> ok;
produce(Consumer, Id, Seq, M) ->
    Consumer ! {Id, Seq},
    produce(Consumer, Id, Seq + 1, M).

consumer(Total, Total, Bad, _Next, Reporter) ->
    Reporter ! {done, Total, Bad};
consumer(Total, Count, Bad, Next, Reporter) ->
    receive
        {Id, Seq} ->
            case Next of
                #{Id := Seq} ->
                    consumer(Total, Count + 1, Bad, Next#{Id := Seq + 1}, Reporter);
                _ ->
                    consumer(Total, Count + 1, Bad + 1, Next, Reporter)
            end
    end.

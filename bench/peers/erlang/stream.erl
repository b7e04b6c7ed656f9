%% stream N — Erlang/OTP peer of actorc's benchmark (see bench/README.md).
%% One producer sends N messages {item, Seq} to one consumer in one go (no
%% yielding of its own; BEAM's reductions preempt it as they do any process).
%% Messages counted: N. Verified: the consumer counted N, all in order.
-module(stream).
-export([main/1]).

main(Args) ->
    bench_peer:run("stream", "N", Args, fun([N]) -> bench(N) end).

bench(N) ->
    Self = self(),
    %% The producer outruns the consumer: keep the consumer's mailbox off
    %% its heap, as the OTP docs advise (and as fanin does).
    Consumer = spawn_opt(fun() -> consumer(N, 0, 0, Self) end,
                         [{message_queue_data, off_heap}]),
    Producer = spawn(fun() -> receive go -> produce(Consumer, 0, N) end end),
    T0 = bench_peer:now_ns(),
    Producer ! go,
    {Count, Bad} = receive {done, C, B} -> {C, B} end,
    Ns = bench_peer:now_ns() - T0,
    Count =:= N andalso Bad =:= 0 orelse
        bench_peer:fail("consumer counted ~B of ~B, ~B out of order", [Count, N, Bad]),
    bench_peer:report("stream", [N], Ns, N).

produce(_Consumer, N, N) -> ok;
produce(Consumer, Seq, N) ->
    Consumer ! {item, Seq},
    produce(Consumer, Seq + 1, N).

consumer(N, N, Bad, Reporter) ->
    Reporter ! {done, N, Bad};
consumer(N, Count, Bad, Reporter) ->
    receive
        {item, Count} -> consumer(N, Count + 1, Bad, Reporter);
        {item, _} -> consumer(N, Count + 1, Bad + 1, Reporter)
    end.

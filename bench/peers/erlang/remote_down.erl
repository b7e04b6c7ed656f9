%% remote_down kill|stop TICKTIME — Erlang/OTP peer of actorc's time to
%% `down` after a node is lost (see bench/peers/README.md). The measuring
%% node monitors a process on the peer node (erlang:monitor/2) and the peer
%% node itself (monitor_node/2), then sends the peer's beam.smp SIGKILL
%% (kill) or SIGSTOP (stop: a frozen node, its sockets stay open). Both
%% nodes run with net_ticktime TICKTIME (seconds; checked on both).
%%
%% The signal is sent by a bash helper started beforehand (a port): on a
%% line from us it reads $EPOCHREALTIME and runs its builtin kill at once,
%% then prints the time; the 'DOWN' is stamped with os:system_time on
%% arrival (both CLOCK_REALTIME, microseconds). Reported (one line, the
%% usual five fields): remote_down_MODE TICKTIME SECONDS 0 PEAK_RSS_KB, with
%% SECONDS from the signal to the 'DOWN'.
%%
%% Verified: the 'DOWN' is for the monitored process on the peer node with
%% reason noconnection, a nodedown for that node came too, nothing else
%% went down, the 'DOWN' came after the signal, and the peer's beam.smp is
%% then dead (kill: gone or a zombie) or stopped (stop: state T). In stop
%% mode the helper kills the frozen node with SIGKILL once we are done (or
%% when we exit: its stdin closes), so it never stays frozen.
-module(remote_down).
-export([main/1, watched/0]).

main([Peer, Mode | Args]) when Mode =:= "kill"; Mode =:= "stop" ->
    Name = "remote_down_" ++ Mode,
    bench_remote:main(Name, "TICKTIME", [Peer | Args],
                      fun(P, [T]) -> bench(Name, P, Mode, T) end);
main(_) ->
    io:format(standard_error, "usage: remote_down PEER_NODE kill|stop TICKTIME~n", []),
    erlang:halt(2).

bench(Name, Peer, Mode, T) ->
    Here = net_kernel:get_net_ticktime(),
    There = rpc:call(Peer, net_kernel, get_net_ticktime, [], bench_remote:wait_ms()),
    Here =:= T andalso There =:= T orelse
        bench_peer:fail("net_ticktime is ~p here and ~p on the peer, expected ~B",
                        [Here, There, T]),
    OsPid = rpc:call(Peer, os, getpid, [], bench_remote:wait_ms()),
    is_list(OsPid) orelse bench_peer:fail("peer's OS pid: ~p", [OsPid]),
    Rss = bench_remote:peak_rss_kb(Peer),
    Watched = spawn(Peer, ?MODULE, watched, []),
    Ref = monitor(process, Watched),
    true = erlang:monitor_node(Peer, true),
    true = rpc:call(Peer, erlang, is_process_alive, [Watched], bench_remote:wait_ms()),
    process_state(OsPid) =:= "S" orelse process_state(OsPid) =:= "R" orelse
        bench_peer:fail("peer's beam.smp ~s is in state ~s before the signal",
                        [OsPid, process_state(OsPid)]),
    Port = signaller(Mode, OsPid),
    port_command(Port, "go\n"),
    %% the down must come within the tick timeout (1.25 TICKTIME) and a
    %% margin; anything later, or no down at all, fails the run
    Deadline = erlang:monotonic_time(millisecond) + T * 1250 + 15000,
    #{signal := Ts, down := Td} = collect(Port, Ref, Watched, Peer, Deadline, #{}),
    %% a killed beam.smp may still be exiting (its sockets close before it
    %% is a zombie): give it up to 5 s
    Expected = case Mode of "kill" -> ["Z", "X", "gone"]; "stop" -> ["T", "t"] end,
    State = state_within(OsPid, Expected, 50),
    lists:member(State, Expected) orelse
        bench_peer:fail("peer's beam.smp ~s is in state ~s after the down, expected ~s",
                        [OsPid, State, lists:join(" or ", Expected)]),
    Td > Ts orelse bench_peer:fail("the 'DOWN' came ~B us before the signal", [Ts - Td]),
    port_close(Port),   % stop mode: the helper now kills the frozen node
    bench_peer:report(Name, [T], (Td - Ts) * 1000, 0, Rss).

%% Collects the helper's signal time, the 'DOWN' and the nodedown, in any
%% order; returns #{signal => Us, down => Us, nodedown => Us}.
collect(_Port, _Ref, _Watched, _Peer, _Deadline, #{signal := _, down := _, nodedown := _} = Got) ->
    Got;
collect(Port, Ref, Watched, Peer, Deadline, Got) ->
    Left = max(0, Deadline - erlang:monotonic_time(millisecond)),
    receive
        {'DOWN', Ref, process, Watched, noconnection} ->
            Now = os:system_time(microsecond),
            not maps:is_key(down, Got) orelse bench_peer:fail("a second 'DOWN'", []),
            collect(Port, Ref, Watched, Peer, Deadline, Got#{down => Now});
        {nodedown, Peer} ->
            Now = os:system_time(microsecond),
            collect(Port, Ref, Watched, Peer, Deadline, Got#{nodedown => Now});
        {Port, {data, {eol, Line}}} ->
            collect(Port, Ref, Watched, Peer, Deadline, Got#{signal => parse_us(Line)});
        {Port, {exit_status, S}} ->
            bench_peer:fail("the signal helper exited with ~B", [S]);
        Other ->
            bench_peer:fail("unexpected message ~p (waiting for the down of ~p on ~s)",
                            [Other, Watched, Peer])
    after Left ->
        bench_peer:fail("no down by 1.25 TICKTIME + 15 s after the signal (got only ~p)",
                        [maps:keys(Got)])
    end.

%% The process monitored on the peer node: it only has to exist.
watched() ->
    receive stop -> ok after 600000 -> ok end.

%% bash, started now so that the signal costs no fork: waits for a line,
%% then stamps the time and signals the peer with its builtin kill; then
%% waits for its stdin to close (port_close, or our exit) and, in stop
%% mode, kills the frozen node.
signaller(Mode, OsPid) ->
    Bash = os:find_executable("bash"),
    is_list(Bash) orelse bench_peer:fail("bash not found", []),
    Script = "[ -n \"${EPOCHREALTIME:-}\" ] || exit 3\n"
             "read -r _ || exit 0\n"
             "t=$EPOCHREALTIME; kill -s \"$1\" \"$2\" || exit 4\n"
             "echo \"$t\"\n"
             "read -r _\n"
             "[ \"$1\" = STOP ] && kill -s KILL \"$2\"\n"
             "exit 0\n",
    Sig = case Mode of "kill" -> "KILL"; "stop" -> "STOP" end,
    open_port({spawn_executable, Bash},
              [{args, ["-c", Script, "signaller", Sig, OsPid]},
               {env, [{"LC_ALL", "C"}]}, {line, 64}, binary, use_stdio,
               exit_status]).

%% "1700000000.123456" (seconds.microseconds) -> microseconds
parse_us(Line) ->
    [S, U] = binary:split(Line, <<".">>),
    6 = byte_size(U),
    binary_to_integer(S) * 1000000 + binary_to_integer(U).

state_within(OsPid, Expected, Tries) ->
    State = process_state(OsPid),
    case lists:member(State, Expected) orelse Tries =< 0 of
        true -> State;
        false -> timer:sleep(100), state_within(OsPid, Expected, Tries - 1)
    end.

%% The state letter of /proc/PID/stat ("gone" when there is no such process).
process_state(OsPid) ->
    case file:read_file("/proc/" ++ OsPid ++ "/stat") of
        {ok, Bin} ->
            [_, After] = string:split(Bin, ") ", trailing),
            [St | _] = string:split(After, " "),
            binary_to_list(St);
        {error, _} -> "gone"
    end.

%% Shared helpers for the Erlang/OTP peers of actorc's benchmarks
%% (see bench/README.md and bench/peers/README.md).
-module(bench_peer).
-export([run/4, now_ns/0, report/4, report/5, fail/2, peak_rss_kb/0]).

%% run(Name, Usage, Args, Fun): parses Args (strings from `erl -run`) as
%% positive integers, calls Fun(Ints) and halts: 0 after a report, 1 after a
%% failed verification (fail/2), 2 on bad arguments or a crash.
run(Name, Usage, Args, Fun) ->
    Ints = try [list_to_integer(A) || A <- Args]
           catch _:_ -> usage(Name, Usage)
           end,
    length(Ints) =:= length(string:lexemes(Usage, " ")) andalso
        lists:all(fun(I) -> I > 0 end, Ints) orelse usage(Name, Usage),
    try Fun(Ints) of
        _ -> erlang:halt(0)
    catch
        throw:{verification_failed, Msg} ->
            io:format(standard_error, "~s: verification failed: ~s~n",
                      [Name, Msg]),
            erlang:halt(1);
        Class:Reason:Stack ->
            io:format(standard_error, "~s: ~p:~p~n~p~n",
                      [Name, Class, Reason, Stack]),
            erlang:halt(2)
    end.

usage(Name, Usage) ->
    io:format(standard_error, "usage: ~s ~s~n", [Name, Usage]),
    erlang:halt(2).

now_ns() -> erlang:monotonic_time(nanosecond).

fail(Fmt, Args) ->
    throw({verification_failed, lists:flatten(io_lib:format(Fmt, Args))}).

%% report(Name, Params, Nanoseconds, Messages): the one output line.
report(Name, Params, Ns, Msgs) ->
    report(Name, Params, Ns, Msgs, peak_rss_kb()).

%% report/5: with the peak RSS given (the remote peers report the larger of
%% their two nodes').
report(Name, Params, Ns, Msgs, RssKb) ->
    Secs = Ns / 1.0e9,
    Rate = case Secs > 0 of true -> round(Msgs / Secs); false -> 0 end,
    P = lists:join("x", [integer_to_list(I) || I <- Params]),
    io:format("~s ~s ~.6f ~B ~B~n", [Name, P, Secs, Rate, RssKb]).

%% VmHWM of the emulator (file I/O runs inside beam.smp, so /proc/self is it).
peak_rss_kb() ->
    {ok, Bin} = file:read_file("/proc/self/status"),
    case re:run(Bin, "VmHWM:\\s*([0-9]+) kB", [{capture, all_but_first, list}]) of
        {match, [Kb]} -> list_to_integer(Kb);
        nomatch -> 0
    end.

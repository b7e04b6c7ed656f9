# fragment.awk — turns a `c fragment` block of the docs into a translation
# unit, for check.sh. Run as: awk -v file=DOC.md -v line=N -f fragment.awk BLOCK
#
# A fragment is the statements of a function body, as a handler or main
# would have them, so it is wrapped in a function after fragment.h (which
# declares the variables fragments use). A function definition in the
# fragment (a key function, a callback: its head, then a line "{" at
# column 0, up to the next line "}") cannot stay inside that function in C, so
# it is moved to file scope, before it. "#line" directives keep every
# diagnostic pointing at the Markdown file's own line.

{ text[NR] = $0 }

END {
    n = NR
    for (i = 1; i <= n; i++)
        hoisted[i] = 0
    for (i = 1; i <= n; i++) {
        if (text[i] !~ /^\{[ \t]*$/)
            continue
        # The head: the lines just above the "{" back to a blank line, the
        # end of a statement or of a comment.
        h = i - 1
        while (h >= 1 && text[h] !~ /^[ \t]*$/ && text[h] !~ /(;|\*\/|\})[ \t]*$/)
            h--
        for (j = i + 1; j <= n && text[j] !~ /^\}[ \t]*$/; j++)
            ;
        if (h == i - 1 || j > n)
            continue    # not a definition: leave it to the compiler to judge
        for (k = h + 1; k <= j; k++)
            hoisted[k] = 1
        i = j
    }

    print "#include \"fragment.h\""
    emit(1)
    print "int doc_fragment(void);"
    print "int doc_fragment(void)"
    print "{"
    emit(0)
    print "    return 0;"
    print "}"
}

# Prints the lines whose hoisted[] is `want`, each run after a #line.
function emit(want,    i, open) {
    open = 0
    for (i = 1; i <= n; i++) {
        if (hoisted[i] != want) {
            open = 0
            continue
        }
        if (!open)
            printf "#line %d \"%s\"\n", line + i - 1, file
        open = 1
        print text[i]
    }
}

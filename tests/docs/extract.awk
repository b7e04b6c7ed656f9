# extract.awk — splits one Markdown file into its fenced code blocks, for
# check.sh. Run as: awk -v out=DIR -f extract.awk FILE.md
#
# Each block's text goes to DIR/N (N = 1, 2, ... in file order) and one line
# per block to DIR/manifest: "N<TAB>LINE<TAB>INFO", LINE being the Markdown
# line of the block's first line of text (so that diagnostics can point
# into the file) and INFO the fence's info string. Only fences of three
# backquotes at column 0 are blocks; anything else that Markdown could take
# for a fence (an indented one, tildes, four backquotes) and a block left
# open at the end are reported as "!<TAB>LINE<TAB>why" lines, because a
# block the checker does not see would go unchecked without anyone knowing.

BEGIN {
    n = 0
    inside = 0
    manifest = out "/manifest"
    printf "" > manifest
}

# A fence the checker does not read is an error, not a block it skips.
!inside && /^[ \t]*(~~~|````)/ {
    printf "!\t%d\tonly fences of three backquotes are checked\n", NR >> manifest
    next
}
!inside && /^[ \t]+```/ {
    printf "!\t%d\tan indented fence is not checked: put the block at column 0\n", NR >> manifest
    next
}

/^```/ {
    if (!inside) {
        inside = 1
        n++
        start = NR + 1
        info = substr($0, 4)
        sub(/[ \t]+$/, "", info)
        body = out "/" n
        printf "" > body
        next
    }
    if ($0 ~ /^```[ \t]*$/) {
        inside = 0
        close(body)
        printf "%d\t%d\t%s\n", n, start, info >> manifest
        next
    }
}

inside { print > body }

END {
    if (inside)
        printf "!\t%d\ta block is never closed\n", start - 1 >> manifest
    close(manifest)
}

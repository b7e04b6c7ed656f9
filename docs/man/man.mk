# Manual pages: the lists the install target installs (MAN1_PAGES to
# $(MANDIR)/man1, MAN3_PAGES to $(MANDIR)/man3), and their lint.
MAN1_PAGES := docs/man/actorc.1 docs/man/actorc-keygen.1
MAN3_PAGES := docs/man/libactorc.3

# The lint, one shell command, run by `make man-lint` and by make test
# (tests/build.mk). Both formatters check a page: mandoc is strict about
# mdoc's structure, groff is what man(1) renders with on most Linux
# systems, and each lets through mistakes the other reports. groff exits
# 0 on warnings, so a page passes only when it prints none. groff comes
# with man-db (groff-base); where it is absent, mandoc's check stands alone.
# check-options.sh holds actorc.1's options and `actorc --help` to one set.
MAN_LINT = set -e; \
    mandoc -Tlint -Wwarning $(MAN1_PAGES) $(MAN3_PAGES); \
    if command -v groff >/dev/null; then \
        for p in $(MAN1_PAGES) $(MAN3_PAGES); do \
            w=$$(groff -ww -z -mdoc $$p 2>&1); \
            [ -z "$$w" ] || { echo "$$p: groff: $$w" >&2; exit 1; }; \
        done; \
    else echo "man: no groff here; mandoc's lint only"; fi; \
    docs/man/check-options.sh $(BUILD)/actorc docs/man/actorc.1

.PHONY: man-lint
man-lint: $(BUILD)/actorc
	@$(MAN_LINT)

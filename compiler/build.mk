# The compiler: grammar/ (re2c, lemon) + compiler/*.c -> $(BUILD)/actorc.
# The passes form a library (libactorc-compiler.a) that tests link directly;
# compiler/main.c is only the command line.

GRAMMAR_OUT := $(BUILD)/grammar
COMPILER_SRC := $(filter-out compiler/main.c,$(wildcard compiler/*.c))
COMPILER_OBJ := $(COMPILER_SRC:%.c=$(BUILD)/obj/%.o) \
                $(GRAMMAR_OUT)/lexer.o $(GRAMMAR_OUT)/parser.o
COMPILER_CPPFLAGS := -Icompiler -I$(GRAMMAR_OUT)

# lemon writes parser.c and parser.h next to each other; the token codes in
# parser.h are what the lexer returns (SQLite's arrangement).
$(GRAMMAR_OUT)/parser.c $(GRAMMAR_OUT)/parser.h &: grammar/parser.y | deps
	@mkdir -p $(GRAMMAR_OUT)
	lemon -q -d$(GRAMMAR_OUT) grammar/parser.y

$(GRAMMAR_OUT)/lexer.c: grammar/lexer.re | deps
	@mkdir -p $(GRAMMAR_OUT)
	re2c -W --no-generation-date --no-version -o $@ grammar/lexer.re

$(GRAMMAR_OUT)/%.o: $(GRAMMAR_OUT)/%.c $(GRAMMAR_OUT)/parser.h
	$(CC) $(CPPFLAGS) $(COMPILER_CPPFLAGS) $(BASE_CFLAGS) $(GEN_WARN) $(CFLAGS) -c $< -o $@

$(COMPILER_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/compiler/main.o: CPPFLAGS += $(COMPILER_CPPFLAGS)
$(COMPILER_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/compiler/main.o: $(GRAMMAR_OUT)/parser.h

$(BUILD)/libactorc-compiler.a: $(COMPILER_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/actorc: $(BUILD)/obj/compiler/main.o $(BUILD)/libactorc-compiler.a
	$(CC) $(LDFLAGS) -o $@ $^

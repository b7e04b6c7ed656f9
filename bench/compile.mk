# The compiler benchmark (bench/compile_gen.c): `make bench-compile`
# prints "compile 200x5000 SECONDS MSGS_PER_SEC PEAK_RSS_KB".

.PHONY: bench-compile
bench-compile: $(BUILD)/bench/compile_gen $(BUILD)/actorc
	$(BUILD)/bench/compile_gen $(BUILD)/actorc $(BUILD)/bench/compile $(CC) runtime

$(BUILD)/bench/compile_gen: bench/compile_gen.c
	@mkdir -p $(@D)
	$(CC) -std=c11 $(OPT) $(WARN) $< -o $@

# The runtime: runtime/*.c -> $(BUILD)/libactorc.a and $(BUILD)/libactorc.so.

AC_VERSION := $(shell sed -n 's/^\#define AC_VERSION_STRING "\(.*\)"/\1/p' runtime/actorc.h)
RUNTIME_SRC := $(wildcard runtime/*.c)
RUNTIME_OBJ := $(RUNTIME_SRC:%.c=$(BUILD)/obj/%.o)

$(RUNTIME_OBJ): CPPFLAGS += $(SODIUM_CFLAGS)
$(RUNTIME_OBJ): OBJ_LTO := $(LTO_CFLAGS)

$(BUILD)/libactorc.a: $(RUNTIME_OBJ)
	$(AR) rcs $@ $^

$(BUILD)/libactorc.so: $(RUNTIME_OBJ)
	$(CC) -shared $(LDFLAGS) $(LTO_LDFLAGS) -Wl,-soname,libactorc.so.0 -o $@ $^ $(SODIUM_LIBS)

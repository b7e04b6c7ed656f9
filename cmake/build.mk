# The CMake package (docs/BUILD.md "CMake"): cmake/*.in filled in for
# `make install`, installed into CMAKEDIR with actorcGenerate.cmake by
# tools/install.mk's rows.

CMAKE_GEN := $(BUILD)/cmake
CMAKE_PACKAGE_FILES := $(CMAKE_GEN)/actorcConfig.cmake $(CMAKE_GEN)/actorcConfigVersion.cmake \
    cmake/actorcGenerate.cmake

# The package finds the install's folders from its own, so it carries them
# relative to CMAKEDIR; they are the install's, so the file is made at each
# install, as actorc.pc is.
cmake_rel = $(shell realpath -ms --relative-to=$(CMAKEDIR) $(1))
.PHONY: $(CMAKE_GEN)/actorcConfig.cmake
$(CMAKE_GEN)/actorcConfig.cmake: cmake/actorcConfig.cmake.in
	@mkdir -p $(@D)
	sed -e 's|@BINDIR_REL@|$(call cmake_rel,$(BINDIR))|; s|@LIBDIR_REL@|$(call cmake_rel,$(LIBDIR))|' \
	    -e 's|@INCLUDEDIR_REL@|$(call cmake_rel,$(INCLUDEDIR))|; s|@SONAME@|$(AC_SONAME)|' $< > $@

# The version and the pointer size are the build's.
CMAKE_SIZEOF_VOID_P = $(shell echo __SIZEOF_POINTER__ | $(CC) -E -P - | tr -d ' \n')
$(CMAKE_GEN)/actorcConfigVersion.cmake: cmake/actorcConfigVersion.cmake.in runtime/include/actorc.h cmake/build.mk
	@mkdir -p $(@D)
	sed -e 's|@VERSION@|$(AC_VERSION)|; s|@SIZEOF_VOID_P@|$(CMAKE_SIZEOF_VOID_P)|' $< > $@

# actorcGenerate.cmake — actorc_generate(), loaded by actorcConfig.cmake
# (docs/BUILD.md "CMake" says what a user writes and gets).
#
#   actorc_generate(TARGET <target> SOURCES <file.actor>...
#                   [IMPORT_DIRS <dir>...] [OUT_DIR <dir>] [STATIC])

function(actorc_generate)
    cmake_parse_arguments(PARSE_ARGV 0 _ag "STATIC" "TARGET;OUT_DIR" "SOURCES;IMPORT_DIRS")
    if(_ag_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "actorc_generate: unknown arguments: ${_ag_UNPARSED_ARGUMENTS}")
    endif()
    if(NOT _ag_TARGET)
        message(FATAL_ERROR "actorc_generate: TARGET is required")
    endif()
    if(NOT TARGET ${_ag_TARGET})
        message(FATAL_ERROR "actorc_generate: no target ${_ag_TARGET}: "
            "call add_executable or add_library first")
    endif()
    if(NOT _ag_SOURCES)
        message(FATAL_ERROR "actorc_generate: SOURCES is required")
    endif()
    set(tgt ${_ag_TARGET})

    # One folder per target: two targets of a folder that generated the
    # same file into one place would race to write it.
    if(NOT _ag_OUT_DIR)
        set(_ag_OUT_DIR ${tgt}_actorc)
    endif()
    get_filename_component(out "${_ag_OUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")

    set(flags)
    foreach(dir IN LISTS _ag_IMPORT_DIRS)
        get_filename_component(dir "${dir}" ABSOLUTE)
        list(APPEND flags -I "${dir}")
    endforeach()

    # Absolute paths everywhere, the depfile's included: the outputs, the
    # depfile's targets and its dependencies then name the same files
    # under every generator, whatever folder the build runs in.
    set(generated)
    foreach(src IN LISTS _ag_SOURCES)
        get_filename_component(src "${src}" ABSOLUTE)
        get_filename_component(name "${src}" NAME)
        if(NOT name MATCHES "\\.actor$")
            message(FATAL_ERROR "actorc_generate: ${src} is not a .actor file")
        endif()
        # The #include "money.actor.h" an import becomes finds the header
        # in the one output folder, so names must be unique across folders.
        if("${out}/${name}.h" IN_LIST generated)
            message(FATAL_ERROR "actorc_generate: two sources named ${name} for ${tgt}")
        endif()
        # The comment starts as CMake's own do, so that the step reads like
        # every other generated file's in the build's output.
        add_custom_command(
            OUTPUT "${out}/${name}.h" "${out}/${name}.c"
            COMMAND actorc::compiler ${flags} -MD -MF "${out}/${name}.d" -o "${out}" "${src}"
            DEPENDS "${src}" "$<TARGET_FILE:actorc::compiler>"
            DEPFILE "${out}/${name}.d"
            COMMENT "Generating ${name}.h and ${name}.c"
            VERBATIM)
        list(APPEND generated "${out}/${name}.h" "${out}/${name}.c")
    endforeach()

    # The headers among the target's sources: both generators then make
    # them before compiling any of its C (the first build, when no
    # dependency of main.c on bank.actor.h is known yet).
    target_sources(${tgt} PRIVATE ${generated})

    # A library's users include the generated headers too.
    get_target_property(type ${tgt} TYPE)
    if(type STREQUAL "EXECUTABLE" OR type STREQUAL "MODULE_LIBRARY")
        set(scope PRIVATE)
    else()
        set(scope PUBLIC)
    endif()
    target_include_directories(${tgt} ${scope} "$<BUILD_INTERFACE:${out}>")

    # The shared runtime, or the static one when asked for here or linked
    # already by the user (target_link_libraries ... actorc::actorc_static
    # before this call). The property, not target_link_libraries: that
    # command fails on a target whose other calls used its other signature.
    get_target_property(linked ${tgt} LINK_LIBRARIES)
    if(NOT linked)
        set(linked)
    endif()
    if(_ag_STATIC OR "actorc::actorc_static" IN_LIST linked)
        set(runtime actorc::actorc_static)
        if("actorc::actorc" IN_LIST linked)
            message(FATAL_ERROR "actorc_generate: ${tgt} links actorc::actorc, the shared runtime")
        endif()
    else()
        set(runtime actorc::actorc)
    endif()
    if(NOT "${runtime}" IN_LIST linked)
        set_property(TARGET ${tgt} APPEND PROPERTY LINK_LIBRARIES ${runtime})
        if(scope STREQUAL "PUBLIC")
            set_property(TARGET ${tgt} APPEND PROPERTY INTERFACE_LINK_LIBRARIES ${runtime})
        endif()
    endif()
endfunction()

# The install test's shared build (TROUPE_LAYERS_FROM, tests/install) links what the static
# build compiled instead of compiling it again: every file is compiled alike for a static and a
# shared libtroupe (PIC, hidden visibility, no define that depends on BUILD_SHARED_LIBS), so
# only the linking differs, and linking is what that build checks (the exports suffice for the
# command-line tool and the Python extension). A static build records the object files of a
# target; a shared build on TROUPE_LAYERS_FROM reads them back.

# Writes <build>/objects/<target>.txt, one object file per line (a static build).
function(troupe_record_objects target)
  if(NOT TROUPE_LAYERS_FROM AND NOT BUILD_SHARED_LIBS)
    file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/objects/${target}.txt
         CONTENT "$<JOIN:$<TARGET_OBJECTS:${target}>,\n>\n")
  endif()
endfunction()

# Sets `var` to the object files TROUPE_LAYERS_FROM's build recorded for `target`, or to
# nothing where it recorded none (then the target compiles its sources).
function(troupe_reused_objects target var)
  set(objects "")
  if(TROUPE_LAYERS_FROM AND EXISTS ${TROUPE_LAYERS_FROM}/objects/${target}.txt)
    file(STRINGS ${TROUPE_LAYERS_FROM}/objects/${target}.txt objects)
    list(FILTER objects INCLUDE REGEX "\\.o$") # not the precompiled header
  endif()
  set(${var} ${objects} PARENT_SCOPE)
endfunction()

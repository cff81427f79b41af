// The system's LMDB header, from Debian's liblmdb-dev (or Homebrew's lmdb).
// Strata never copies LMDB source into the project: this module only points at the installed library.
#include <lmdb.h>

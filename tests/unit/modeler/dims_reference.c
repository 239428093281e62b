/* SPDX-License-Identifier: BSD-3-Clause */
/* Prints the installed MPI's library version (a first line "library <the first line of MPI_Get_library_version>"),
 * then what its MPI_Dims_create returns for n = 1..4096 and ndims = 2, 3 (all dimensions free), one line
 * "ndims n d0 d1 [d2]" per case, into the file named by argv[1]; the test modeler.dims.matches_mpi compares
 * p3s::modeler::dims_create under that library's rule with it. Runs as a single MPI process (singleton init). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OUTPUT\n", argv[0]);
    return 2;
  }
  MPI_Init(&argc, &argv);
  FILE* out = fopen(argv[1], "w");
  int status = out == NULL ? 1 : 0;
  if (out != NULL) {
    char library[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
    int length = 0;
    MPI_Get_library_version(library, &length);
    library[strcspn(library, "\r\n")] = '\0';
    fprintf(out, "library %s\n", library);
  }
  for (int ndims = 2; ndims <= 3 && status == 0; ++ndims) {
    for (int n = 1; n <= 4096 && status == 0; ++n) {
      int dims[3] = {0, 0, 0};
      if (MPI_Dims_create(n, ndims, dims) != MPI_SUCCESS) {
        fprintf(stderr, "MPI_Dims_create(%d, %d) failed\n", n, ndims);
        status = 1;
        break;
      }
      fprintf(out, "%d %d", ndims, n);
      for (int i = 0; i < ndims; ++i) {
        fprintf(out, " %d", dims[i]);
      }
      fprintf(out, "\n");
    }
  }
  if (out == NULL) {
    fprintf(stderr, "cannot write %s\n", argv[1]);
  } else if (fclose(out) != 0) {
    status = 1;
  }
  MPI_Finalize();
  return status;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) 2026 The virtio-stellar authors
 *
 * MPI_Allreduce with checked results, for the OpenMPI integration test.
 *
 *   mpi_allreduce COUNT...
 *
 * For every COUNT, each rank contributes COUNT 64-bit integers that depend
 * on its rank and the element index; every rank checks each element of
 * the sum (MPI_SUM) and of the maximum (MPI_MAX) against the value it
 * computes itself.  Rank 0 prints one "allreduce ok" line per COUNT; any
 * wrong element is reported and the program exits 1.  Each rank also
 * prints the host it runs on.
 */
#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* What rank @rank contributes at index @i. */
static int64_t contribution(int rank, long i)
{
	return (int64_t)(rank + 1) * 1000003 + i * (rank + 7);
}

static int64_t expected_sum(int nranks, long i)
{
	int64_t sum = 0;
	int rank;

	for (rank = 0; rank < nranks; rank++)
		sum += contribution(rank, i);
	return sum;
}

/* Contributions grow with the rank, so the last rank holds the maximum. */
static int64_t expected_max(int nranks, long i)
{
	return contribution(nranks - 1, i);
}

static long count_errors(const int64_t *got, long count, int nranks,
			 int64_t (*expected)(int, long), const char *what,
			 int rank)
{
	long i, errors = 0;

	for (i = 0; i < count; i++) {
		if (got[i] == expected(nranks, i))
			continue;
		if (errors++ < 5)
			fprintf(stderr,
				"rank %d: %s[%ld] = %" PRId64 ", expected %" PRId64 "\n",
				rank, what, i, got[i], expected(nranks, i));
	}
	return errors;
}

static int check_count(long count, int rank, int nranks)
{
	int64_t *in, *sum, *max;
	long i, errors, total;

	in = malloc(count * sizeof(*in));
	sum = malloc(count * sizeof(*sum));
	max = malloc(count * sizeof(*max));
	if (!in || !sum || !max) {
		fprintf(stderr, "rank %d: out of memory for %ld elements\n",
			rank, count);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (i = 0; i < count; i++)
		in[i] = contribution(rank, i);

	MPI_Allreduce(in, sum, count, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(in, max, count, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
	errors = count_errors(sum, count, nranks, expected_sum, "sum", rank) +
		 count_errors(max, count, nranks, expected_max, "max", rank);

	/* Every rank learns whether any rank saw a wrong element. */
	MPI_Allreduce(&errors, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0 && !total)
		printf("allreduce ok: %d ranks, %ld x int64 (%ld bytes)\n",
		       nranks, count, count * (long)sizeof(*in));
	free(in);
	free(sum);
	free(max);
	return total ? 1 : 0;
}

int main(int argc, char **argv)
{
	char host[MPI_MAX_PROCESSOR_NAME];
	int rank, nranks, len, arg, failed = 0;
	long count;
	char *end;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	MPI_Get_processor_name(host, &len);
	printf("rank %d of %d on %s\n", rank, nranks, host);
	fflush(stdout);

	if (argc < 2) {
		if (rank == 0)
			fprintf(stderr, "usage: %s COUNT...\n", argv[0]);
		MPI_Finalize();
		return 2;
	}
	for (arg = 1; arg < argc; arg++) {
		count = strtol(argv[arg], &end, 0);
		if (*end || count < 1 || count > (1L << 24)) {
			if (rank == 0)
				fprintf(stderr, "bad COUNT '%s' (1..%ld)\n",
					argv[arg], 1L << 24);
			MPI_Finalize();
			return 2;
		}
		failed |= check_count(count, rank, nranks);
	}
	MPI_Finalize();
	return failed;
}

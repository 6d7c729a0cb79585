/* Drops one named table of an LMDB store, as damage a test can do on purpose
 * (test/durability/damage.test.ts builds it with `cc ... -llmdb`): lmdb-drop <dir> <table>. */
#include <lmdb.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MDB_env *env;
  MDB_txn *txn;
  MDB_dbi dbi;
  int rc;
  if (argc != 3) {
    fprintf(stderr, "usage: lmdb-drop <dir> <table>\n");
    return 2;
  }
  if ((rc = mdb_env_create(&env)) || (rc = mdb_env_set_maxdbs(env, 64)) || (rc = mdb_env_set_mapsize(env, (size_t)1 << 30)) ||
      (rc = mdb_env_open(env, argv[1], 0, 0644)) || (rc = mdb_txn_begin(env, NULL, 0, &txn)) || (rc = mdb_dbi_open(txn, argv[2], 0, &dbi)) ||
      (rc = mdb_drop(txn, dbi, 1)) || (rc = mdb_txn_commit(txn))) {
    fprintf(stderr, "lmdb-drop: %s\n", mdb_strerror(rc));
    return 1;
  }
  mdb_env_close(env);
  return 0;
}

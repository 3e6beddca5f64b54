package supportdesk.local;

import java.lang.reflect.Method;

/**
 * How DynamoDB Local's one SQLite connection journals its writes (local/dynamodb-schema-cache.ts says why). Run once,
 * when the store opens its file, from the hook sqlite4java's queue leaves empty for this (`SQLiteQueue.initConnection`).
 */
public final class StoreConnection {
  /**
   * - journal_mode=WAL: a commit appends its pages to one log instead of copying each page to a journal file that is
   *   created and deleted per transaction. It is kept in the file, so the store opens it the same way without the agent.
   * - synchronous=NORMAL: in WAL mode a commit is no longer synced to the disk, only handed to the operating system,
   *   so a crash or a kill of the store loses nothing; a crash of the machine may lose the last commits, never the file.
   * - temp_store=MEMORY: the statement journals and sorts of a transaction stay in memory, not in files under /var/tmp.
   * An in-memory store keeps its own journal (`memory`); the other two apply to it as well.
   */
  static final String[] PRAGMAS = {"journal_mode=WAL", "synchronous=NORMAL", "temp_store=MEMORY"};

  private StoreConnection() {}

  /**
   * The connection is sqlite4java's SQLiteConnection, called by reflection: the agent compiles without that jar. A
   * setting refused leaves the connection as shipped rather than the store unable to open.
   */
  public static void init(Object connection) {
    try {
      Method exec = connection.getClass().getMethod("exec", String.class);
      for (String pragma : PRAGMAS) exec.invoke(connection, "PRAGMA " + pragma);
      System.err.println("store connection: " + String.join(", ", PRAGMAS));
    } catch (ReflectiveOperationException | RuntimeException e) {
      System.err.println("store connection: left as shipped: " + (e.getCause() != null ? e.getCause() : e));
    }
  }
}

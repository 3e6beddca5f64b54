package supportdesk.local;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.Arrays;

/**
 * The parsed table descriptions, keyed by their exact stored bytes: a description that changes is new bytes, so it
 * is parsed again. A few entries (two tables, their stream settings, and the moment of a change) are all a store
 * holds; the oldest goes first.
 */
public final class SchemaCache {
  private static final int SIZE = 16;
  private static final byte[][] keys = new byte[SIZE][];
  private static final Object[] values = new Object[SIZE];
  private static int next;
  private static volatile boolean disabled;
  /** Counted for the log line at exit, which the tests read: descriptions parsed, and answered from the cache. */
  private static long parsed, answered;

  private SchemaCache() {}

  /** The classes kept: parsed only from the table's stored description, never changed by the call sites that read them. */
  private static boolean kept(Class<?> type) {
    String name = type.getName();
    return name.equals("software.amazon.dynamodb.services.local.shared.access.sqlite.TableSchemaInfo")
        || name.equals("software.amazon.dynamodb.services.local.shared.access.StreamInfo");
  }

  public static Object readValue(Object mapper, byte[] json, Class<?> type) throws IOException {
    if (disabled || !kept(type)) return ((ObjectMapper) mapper).readValue(json, type);
    synchronized (keys) {
      for (int i = 0; i < SIZE; i++) {
        byte[] key = keys[i];
        if (key != null && key.length == json.length && values[i].getClass() == type && Arrays.equals(key, json)) {
          answered++;
          return values[i];
        }
      }
    }
    Object value = ((ObjectMapper) mapper).readValue(json, type);
    synchronized (keys) {
      parsed++;
      keys[next] = json.clone();
      values[next] = value;
      next = (next + 1) % SIZE;
    }
    return value;
  }

  public static void clear() {
    synchronized (keys) {
      Arrays.fill(keys, null);
      Arrays.fill(values, null);
      next = 0;
    }
  }

  static String counts() {
    synchronized (keys) {
      return parsed + " descriptions parsed, " + answered + " answered from the cache";
    }
  }

  static void disable(String why) {
    disabled = true;
    clear();
    System.err.println("schema cache: off: " + why);
  }
}

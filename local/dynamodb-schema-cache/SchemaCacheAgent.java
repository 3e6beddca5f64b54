package supportdesk.local;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.Map;
import java.util.Set;
import jdk.internal.org.objectweb.asm.ClassReader;
import jdk.internal.org.objectweb.asm.ClassVisitor;
import jdk.internal.org.objectweb.asm.ClassWriter;
import jdk.internal.org.objectweb.asm.MethodVisitor;
import jdk.internal.org.objectweb.asm.Opcodes;

/**
 * A Java agent for DynamoDB Local (the version local/dynamodb-local.ts pins) that keeps the table's parsed
 * description between requests (local/dynamodb-schema-cache.ts says why). It changes two kinds of call, nothing else:
 *
 * - READS: where DynamoDB Local parses a table's stored description (its schema, once per request and once per item
 *   read or written; its stream settings, once per item written), the parse goes through SchemaCache.readValue,
 *   which answers the object parsed before from the same bytes. Those call sites only read what they get.
 * - CONTROL: the control-plane methods that change a table (create, update, TTL, delete, an index's columns) empty
 *   the cache when they start and again when they end, so nothing parsed before or during a change outlives it.
 *
 * - CONNECTION: the hook sqlite4java's queue runs once when it opens the store's file (`initConnection`, empty as
 *   shipped) calls StoreConnection.init, which sets how the connection journals its writes.
 *
 * A class whose calls are not found exactly as expected is left as it is: the store then runs as shipped.
 */
public final class SchemaCacheAgent {
  private static final String PKG = "software/amazon/dynamodb/services/local/shared/access/sqlite/";
  private static final String READ_VALUE = "([BLjava/lang/Class;)Ljava/lang/Object;";
  private static final String CACHE = "supportdesk/local/SchemaCache";
  private static final String QUEUE = "com/almworks/sqlite4java/SQLiteQueue";
  private static final String INIT_CONNECTION = "(Lcom/almworks/sqlite4java/SQLiteConnection;)V";

  /** Per class, the methods whose description parses go through the cache, and how many such parses each holds. */
  private static final Map<String, Map<String, Integer>> READS = Map.of(
      PKG + "SQLiteDBAccessJob", Map.of("getTableSchemaInfo2", 1, "getStreamDescription", 1),
      // The job behind getTableInfo, run once per request.
      PKG + "SQLiteDBAccess$25", Map.of("doWork", 1));
  private static final Set<String> CONTROL = Set.of("createTable", "updateTable", "updateMetadataTable", "deleteTable", "createGSIColumns", "deleteGSI", "backfillGSI");

  private SchemaCacheAgent() {}

  public static void premain(String args, Instrumentation inst) {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> System.err.println("schema cache: " + SchemaCache.counts())));
    inst.addTransformer(new ClassFileTransformer() {
      @Override
      public byte[] transform(ClassLoader loader, String name, Class<?> redefined, ProtectionDomain domain, byte[] bytes) {
        try {
          if (READS.containsKey(name)) return reads(name, bytes, READS.get(name));
          if ((PKG + "SQLiteDBAccess").equals(name)) return control(name, bytes);
          if (QUEUE.equals(name)) return connection(name, bytes);
        } catch (Throwable t) {
          // Without every invalidation in place the reads must not be cached either.
          if ((PKG + "SQLiteDBAccess").equals(name)) SchemaCache.disable("SQLiteDBAccess left as shipped: " + t);
          else System.err.println("schema cache: " + name + " left as shipped: " + t);
        }
        return null;
      }
    });
  }

  private static byte[] reads(String name, byte[] bytes, Map<String, Integer> expected) {
    ClassReader reader = new ClassReader(bytes);
    ClassWriter writer = new ClassWriter(reader, 0);
    Map<String, Integer> found = new java.util.HashMap<>();
    reader.accept(new ClassVisitor(Opcodes.ASM8, writer) {
      @Override
      public MethodVisitor visitMethod(int access, String method, String desc, String signature, String[] exceptions) {
        MethodVisitor mv = super.visitMethod(access, method, desc, signature, exceptions);
        if (!expected.containsKey(method)) return mv;
        return new MethodVisitor(Opcodes.ASM8, mv) {
          @Override
          public void visitMethodInsn(int op, String owner, String called, String calledDesc, boolean itf) {
            if (op == Opcodes.INVOKEVIRTUAL && called.equals("readValue") && calledDesc.equals(READ_VALUE)) {
              found.merge(method, 1, Integer::sum);
              // Same operands on the stack (the mapper, the bytes, the class), same result.
              super.visitMethodInsn(Opcodes.INVOKESTATIC, CACHE, "readValue", "(Ljava/lang/Object;[BLjava/lang/Class;)Ljava/lang/Object;", false);
            } else super.visitMethodInsn(op, owner, called, calledDesc, itf);
          }
        };
      }
    }, 0);
    if (!found.equals(expected)) {
      System.err.println("schema cache: " + name + " left as shipped: expected parses " + expected + ", found " + found);
      return null;
    }
    System.err.println("schema cache: " + name + " " + new java.util.TreeSet<>(expected.keySet()) + " read through the cache");
    return writer.toByteArray();
  }

  private static byte[] control(String name, byte[] bytes) {
    ClassReader reader = new ClassReader(bytes);
    ClassWriter writer = new ClassWriter(reader, 0);
    Set<String> found = new java.util.TreeSet<>();
    reader.accept(new ClassVisitor(Opcodes.ASM8, writer) {
      @Override
      public MethodVisitor visitMethod(int access, String method, String desc, String signature, String[] exceptions) {
        MethodVisitor mv = super.visitMethod(access, method, desc, signature, exceptions);
        if (!CONTROL.contains(method)) return mv;
        found.add(method);
        return new MethodVisitor(Opcodes.ASM8, mv) {
          private void clear() {
            // A static call of no argument and no result: the method's stack and frames are unchanged.
            super.visitMethodInsn(Opcodes.INVOKESTATIC, CACHE, "clear", "()V", false);
          }

          @Override
          public void visitCode() {
            super.visitCode();
            clear();
          }

          @Override
          public void visitInsn(int op) {
            if ((op >= Opcodes.IRETURN && op <= Opcodes.RETURN) || op == Opcodes.ATHROW) clear();
            super.visitInsn(op);
          }
        };
      }
    }, 0);
    if (!found.equals(CONTROL)) {
      // Without every invalidation the reads must not be cached either.
      SchemaCache.disable("SQLiteDBAccess lacks " + CONTROL.stream().filter(m -> !found.contains(m)).toList());
      return null;
    }
    System.err.println("schema cache: " + name + " " + found + " empty the cache");
    return writer.toByteArray();
  }

  private static byte[] connection(String name, byte[] bytes) {
    ClassReader reader = new ClassReader(bytes);
    // The hook as shipped is a bare return (stack 0): the call added needs a stack of one.
    ClassWriter writer = new ClassWriter(reader, ClassWriter.COMPUTE_MAXS);
    boolean[] found = {false};
    reader.accept(new ClassVisitor(Opcodes.ASM8, writer) {
      @Override
      public MethodVisitor visitMethod(int access, String method, String desc, String signature, String[] exceptions) {
        MethodVisitor mv = super.visitMethod(access, method, desc, signature, exceptions);
        if (!method.equals("initConnection") || !desc.equals(INIT_CONNECTION)) return mv;
        found[0] = true;
        return new MethodVisitor(Opcodes.ASM8, mv) {
          @Override
          public void visitCode() {
            super.visitCode();
            super.visitVarInsn(Opcodes.ALOAD, 1);
            super.visitMethodInsn(Opcodes.INVOKESTATIC, "supportdesk/local/StoreConnection", "init", "(Ljava/lang/Object;)V", false);
          }
        };
      }
    }, 0);
    if (!found[0]) {
      System.err.println("store connection: " + name + " left as shipped: no initConnection" + INIT_CONNECTION);
      return null;
    }
    return writer.toByteArray();
  }
}

package dev.gdasync.gdsync.cuda;

import java.nio.file.Path;

/**
 * A child JVM of {@link FakeCudaStreamTest}: opens the (fake) driver, runs the named
 * {@link CudaStreamScenarios}, and prints {@code scenario: ok} or {@code scenario: FAILED ...} lines, the facts
 * the scenarios report, and {@code end}.
 */
public final class CudaStreamMain {
    private CudaStreamMain() {
    }

    /**
     * @param args a scratch folder, then scenario names
     */
    public static void main(String[] args) {
        Path base = Path.of(args[0]);
        try {
            CudaContext context;
            try {
                context = CudaContext.retainPrimary(CudaDriver.open().device(0));
            } catch (CudaException e) {
                System.out.println("open: " + e.getMessage());
                return;
            }
            try (context) {
                CudaStreamScenarios s = new CudaStreamScenarios(context, System.out::println);
                for (int i = 1; i < args.length; i++) {
                    String name = args[i];
                    try {
                        switch (name) {
                            case "memops" -> s.memops();
                            case "copies" -> s.copies();
                            case "events" -> s.events();
                            case "swnic" -> s.swnic(base);
                            case "mlx5" -> s.mlx5(base);
                            case "throws" -> s.hostTaskThrows();
                            case "timeout" -> s.timeout();
                            case "close" -> s.close();
                            case "unsupported" -> s.unsupported();
                            case "arguments" -> s.arguments();
                            case "create" -> {
                                try (CudaStream stream = CudaStream.create("create", context)) {
                                    System.out.println("caps: " + stream.capabilities());
                                }
                            }
                            default -> throw new IllegalArgumentException("no scenario " + name);
                        }
                        System.out.println(name + ": ok");
                    } catch (Throwable t) {
                        System.out.println(name + ": FAILED " + t);
                        t.printStackTrace(System.out);
                    }
                }
            }
        } catch (Throwable t) {
            System.out.println("unexpected: " + t);
            t.printStackTrace(System.out);
        } finally {
            System.out.println("end");
            System.out.flush();
            // Driver threads of the fake may still be parked in a stream that the scenarios left stuck.
            System.exit(0);
        }
    }
}

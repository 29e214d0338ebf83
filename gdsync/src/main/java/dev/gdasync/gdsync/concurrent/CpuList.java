package dev.gdasync.gdsync.concurrent;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * Linux's CPU list format, as in {@code /proc/self/status}'s {@code Cpus_allowed_list} and {@code taskset -c}:
 * comma-separated CPUs and ranges, {@code 0-3,8,10-11}.
 */
public final class CpuList {
    private CpuList() {
    }

    /**
     * @param text a CPU list; blank for none
     * @return its CPUs, ascending, each once
     * @throws IllegalArgumentException if the text is not a CPU list
     */
    public static List<Integer> parse(String text) {
        TreeSet<Integer> cpus = new TreeSet<>();
        String t = text.strip();
        if (t.isEmpty()) {
            return List.of();
        }
        for (String part : t.split(",")) {
            String p = part.strip();
            try {
                int dash = p.indexOf('-');
                int from = Integer.parseInt(dash < 0 ? p : p.substring(0, dash));
                int to = dash < 0 ? from : Integer.parseInt(p.substring(dash + 1));
                if (from < 0 || to < from) {
                    throw new IllegalArgumentException("'" + p + "' is not a CPU or an ascending range in '" + text + "'");
                }
                for (int c = from; c <= to; c++) {
                    cpus.add(c);
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("'" + p + "' is not a CPU or a range of CPUs in '" + text + "'", e);
            }
        }
        return List.copyOf(cpus);
    }

    /**
     * @param cpus CPUs, ascending
     * @return the list with runs of three or more written as ranges ({@code 0-3,8}); empty for none
     */
    public static String format(List<Integer> cpus) {
        List<String> parts = new ArrayList<>();
        int i = 0;
        while (i < cpus.size()) {
            int j = i;
            while (j + 1 < cpus.size() && cpus.get(j + 1) == cpus.get(j) + 1) {
                j++;
            }
            if (j - i >= 2) {
                parts.add(cpus.get(i) + "-" + cpus.get(j));
            } else {
                for (int k = i; k <= j; k++) {
                    parts.add(String.valueOf(cpus.get(k)));
                }
            }
            i = j + 1;
        }
        return String.join(",", parts);
    }
}

public class Hot {
    static int leafHot(int n) { int s = 0; for (int i = 0; i < n; i++) s += (int) Math.sqrt(i * 1.5); return s; }
    static int midHot(int n) { return leafHot(n) + leafHot(n >> 1); }
    static int topHot(int n) { return midHot(n) ^ 1; }
    public static void main(String[] a) {
        // ARG ms of this thread's CPU time, not of wall time: a busy machine
        // makes the run longer, not poorer in samples (tests/record/jit.sh)
        java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean();
        long end = cpu.getCurrentThreadCpuTime() + 1000000L * (a.length > 0 ? Long.parseLong(a[0]) : 2000);
        long acc = 0;
        while (cpu.getCurrentThreadCpuTime() < end) acc += topHot(20000);
        System.out.println(acc != 0 ? "done" : "done0");
    }
}

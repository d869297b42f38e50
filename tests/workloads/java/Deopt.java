// Java workload for bprof's HotSpot frames (tests/record/jvm.sh): a method
// compiled, then deoptimized and recompiled mid-run.  work() calls
// Shape.area() on one class only in phase A (C2 compiles it for that class
// alone); phase B brings a second class: work's code is made not entrant
// (deoptimized), runs interpreted, then is compiled again; phase C brings a
// third (a megamorphic call through an itable stub, recompiled again).
// Frames of one phase must never be named for another's.
public class Deopt {
    interface Shape { double area(double k); }
    static final class Square implements Shape {
        public double area(double k) { return Math.sqrt(k) * Math.sqrt(k + 1); }
    }
    static final class Circle implements Shape {
        public double area(double k) { return Math.sqrt(k + 2) * 3.14159; }
    }
    static final class Triangle implements Shape {
        public double area(double k) { return Math.sqrt(k + 3) * 0.5; }
    }

    static double work(Shape sh, double x) {
        double s = 0;
        for (int i = 1; i < 300; i++) {
            s += sh.area(x + i);
        }
        if (s < -1e300) { // padding: keeps this method out of its callers
            s = s * 1.0000 + 0.5;
            s = s * 1.0001 + 1.5;
            s = s * 1.0002 + 2.5;
            s = s * 1.0003 + 3.5;
            s = s * 1.0004 + 4.5;
            s = s * 1.0005 + 5.5;
            s = s * 1.0006 + 6.5;
            s = s * 1.0007 + 7.5;
            s = s * 1.0008 + 8.5;
            s = s * 1.0009 + 9.5;
            s = s * 1.0010 + 10.5;
            s = s * 1.0011 + 11.5;
            s = s * 1.0012 + 12.5;
            s = s * 1.0013 + 13.5;
            s = s * 1.0014 + 14.5;
            s = s * 1.0015 + 15.5;
            s = s * 1.0016 + 16.5;
            s = s * 1.0017 + 17.5;
            s = s * 1.0018 + 18.5;
            s = s * 1.0019 + 19.5;
            s = s * 1.0020 + 20.5;
            s = s * 1.0021 + 21.5;
            s = s * 1.0022 + 22.5;
            s = s * 1.0023 + 23.5;
            s = s * 1.0024 + 24.5;
            s = s * 1.0025 + 25.5;
            s = s * 1.0026 + 26.5;
            s = s * 1.0027 + 27.5;
            s = s * 1.0028 + 28.5;
            s = s * 1.0029 + 29.5;
            s = s * 1.0030 + 30.5;
            s = s * 1.0031 + 31.5;
            s = s * 1.0032 + 32.5;
            s = s * 1.0033 + 33.5;
            s = s * 1.0034 + 34.5;
            s = s * 1.0035 + 35.5;
            s = s * 1.0036 + 36.5;
            s = s * 1.0037 + 37.5;
            s = s * 1.0038 + 38.5;
            s = s * 1.0039 + 39.5;
        }
        return s;
    }

    static double phaseA(double x) {
        double s = work(new Square(), x);
        if (s < -1e300) { // padding: keeps this method out of its callers
            s = s * 1.0000 + 0.5;
            s = s * 1.0001 + 1.5;
            s = s * 1.0002 + 2.5;
            s = s * 1.0003 + 3.5;
            s = s * 1.0004 + 4.5;
            s = s * 1.0005 + 5.5;
            s = s * 1.0006 + 6.5;
            s = s * 1.0007 + 7.5;
            s = s * 1.0008 + 8.5;
            s = s * 1.0009 + 9.5;
            s = s * 1.0010 + 10.5;
            s = s * 1.0011 + 11.5;
            s = s * 1.0012 + 12.5;
            s = s * 1.0013 + 13.5;
            s = s * 1.0014 + 14.5;
            s = s * 1.0015 + 15.5;
            s = s * 1.0016 + 16.5;
            s = s * 1.0017 + 17.5;
            s = s * 1.0018 + 18.5;
            s = s * 1.0019 + 19.5;
            s = s * 1.0020 + 20.5;
            s = s * 1.0021 + 21.5;
            s = s * 1.0022 + 22.5;
            s = s * 1.0023 + 23.5;
            s = s * 1.0024 + 24.5;
            s = s * 1.0025 + 25.5;
            s = s * 1.0026 + 26.5;
            s = s * 1.0027 + 27.5;
            s = s * 1.0028 + 28.5;
            s = s * 1.0029 + 29.5;
            s = s * 1.0030 + 30.5;
            s = s * 1.0031 + 31.5;
            s = s * 1.0032 + 32.5;
            s = s * 1.0033 + 33.5;
            s = s * 1.0034 + 34.5;
            s = s * 1.0035 + 35.5;
            s = s * 1.0036 + 36.5;
            s = s * 1.0037 + 37.5;
            s = s * 1.0038 + 38.5;
            s = s * 1.0039 + 39.5;
        }
        return s;
    }

    static double phaseB(double x) {
        double s = work(new Circle(), x);
        if (s < -1e300) { // padding: keeps this method out of its callers
            s = s * 1.0000 + 0.5;
            s = s * 1.0001 + 1.5;
            s = s * 1.0002 + 2.5;
            s = s * 1.0003 + 3.5;
            s = s * 1.0004 + 4.5;
            s = s * 1.0005 + 5.5;
            s = s * 1.0006 + 6.5;
            s = s * 1.0007 + 7.5;
            s = s * 1.0008 + 8.5;
            s = s * 1.0009 + 9.5;
            s = s * 1.0010 + 10.5;
            s = s * 1.0011 + 11.5;
            s = s * 1.0012 + 12.5;
            s = s * 1.0013 + 13.5;
            s = s * 1.0014 + 14.5;
            s = s * 1.0015 + 15.5;
            s = s * 1.0016 + 16.5;
            s = s * 1.0017 + 17.5;
            s = s * 1.0018 + 18.5;
            s = s * 1.0019 + 19.5;
            s = s * 1.0020 + 20.5;
            s = s * 1.0021 + 21.5;
            s = s * 1.0022 + 22.5;
            s = s * 1.0023 + 23.5;
            s = s * 1.0024 + 24.5;
            s = s * 1.0025 + 25.5;
            s = s * 1.0026 + 26.5;
            s = s * 1.0027 + 27.5;
            s = s * 1.0028 + 28.5;
            s = s * 1.0029 + 29.5;
            s = s * 1.0030 + 30.5;
            s = s * 1.0031 + 31.5;
            s = s * 1.0032 + 32.5;
            s = s * 1.0033 + 33.5;
            s = s * 1.0034 + 34.5;
            s = s * 1.0035 + 35.5;
            s = s * 1.0036 + 36.5;
            s = s * 1.0037 + 37.5;
            s = s * 1.0038 + 38.5;
            s = s * 1.0039 + 39.5;
        }
        return s;
    }

    // phase C: three classes at work's call site, which becomes megamorphic
    // (a call through an itable stub)
    static double phaseC(double x) {
        Shape[] shapes = { new Square(), new Circle(), new Triangle() };
        double s = 0;
        for (int i = 0; i < 3; i++) {
            s += work(shapes[i], x);
        }
        if (s < -1e300) { // padding: keeps this method out of its callers
            s = s * 1.0000 + 0.5;
            s = s * 1.0001 + 1.5;
            s = s * 1.0002 + 2.5;
            s = s * 1.0003 + 3.5;
            s = s * 1.0004 + 4.5;
            s = s * 1.0005 + 5.5;
            s = s * 1.0006 + 6.5;
            s = s * 1.0007 + 7.5;
            s = s * 1.0008 + 8.5;
            s = s * 1.0009 + 9.5;
            s = s * 1.0010 + 10.5;
            s = s * 1.0011 + 11.5;
            s = s * 1.0012 + 12.5;
            s = s * 1.0013 + 13.5;
            s = s * 1.0014 + 14.5;
            s = s * 1.0015 + 15.5;
            s = s * 1.0016 + 16.5;
            s = s * 1.0017 + 17.5;
            s = s * 1.0018 + 18.5;
            s = s * 1.0019 + 19.5;
            s = s * 1.0020 + 20.5;
            s = s * 1.0021 + 21.5;
            s = s * 1.0022 + 22.5;
            s = s * 1.0023 + 23.5;
            s = s * 1.0024 + 24.5;
            s = s * 1.0025 + 25.5;
            s = s * 1.0026 + 26.5;
            s = s * 1.0027 + 27.5;
            s = s * 1.0028 + 28.5;
            s = s * 1.0029 + 29.5;
            s = s * 1.0030 + 30.5;
            s = s * 1.0031 + 31.5;
            s = s * 1.0032 + 32.5;
            s = s * 1.0033 + 33.5;
            s = s * 1.0034 + 34.5;
            s = s * 1.0035 + 35.5;
            s = s * 1.0036 + 36.5;
            s = s * 1.0037 + 37.5;
            s = s * 1.0038 + 38.5;
            s = s * 1.0039 + 39.5;
        }
        return s;
    }

    // Each phase lasts ARG/3 ms of this thread's CPU time, not of wall time:
    // on a busy machine a phase takes longer but gets the same samples (the
    // sampler counts CPU time), so the test's shares and counts do not depend
    // on the scheduler.  The clock is read every 16 calls, from main itself (a
    // method of this class would be a frame the test does not expect).
    public static void main(String[] args) {
        long ns = Long.parseLong(args.length > 0 ? args[0] : "6000") * 1000000 / 3;
        java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean();
        double s = 0;
        long end = cpu.getCurrentThreadCpuTime() + ns;
        while (cpu.getCurrentThreadCpuTime() < end) {
            for (int k = 0; k < 16; k++) {
                s += phaseA(s % 3);
            }
        }
        end = cpu.getCurrentThreadCpuTime() + ns;
        while (cpu.getCurrentThreadCpuTime() < end) {
            for (int k = 0; k < 16; k++) {
                s += phaseB(s % 3);
            }
        }
        end = cpu.getCurrentThreadCpuTime() + ns;
        while (cpu.getCurrentThreadCpuTime() < end) {
            for (int k = 0; k < 16; k++) {
                s += phaseC(s % 3);
            }
        }
        System.out.println(s > 0 ? "done" : "done.");
    }
}

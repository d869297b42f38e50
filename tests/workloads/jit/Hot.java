public class Hot {
    static int leafHot(int n) { int s = 0; for (int i = 0; i < n; i++) s += (int) Math.sqrt(i * 1.5); return s; }
    static int midHot(int n) { return leafHot(n) + leafHot(n >> 1); }
    static int topHot(int n) { return midHot(n) ^ 1; }
    public static void main(String[] a) {
        long end = System.currentTimeMillis() + (a.length > 0 ? Long.parseLong(a[0]) : 2000);
        long acc = 0;
        while (System.currentTimeMillis() < end) acc += topHot(20000);
        System.out.println(acc != 0 ? "done" : "done0");
    }
}

/* wide: 120 leaf allocators of different sizes and 12 callers sharing one
 * hub (repetitive on purpose), so jeprof's node and edge pruning
 * (nodecount, nodefraction, edgefraction, maxdegree) all apply. */
#include "dump.h"

static void *keep[200000];
static int nkeep;

__attribute__((noinline)) void hub(int n) { keep[nkeep++] = malloc(n); }

__attribute__((noinline)) void leaf0(void) { for (int i = 0; i < 1; i++) keep[nkeep++] = malloc(64); }
__attribute__((noinline)) void leaf1(void) { for (int i = 0; i < 2; i++) keep[nkeep++] = malloc(2432); }
__attribute__((noinline)) void leaf2(void) { for (int i = 0; i < 3; i++) keep[nkeep++] = malloc(4800); }
__attribute__((noinline)) void leaf3(void) { for (int i = 0; i < 4; i++) keep[nkeep++] = malloc(7168); }
__attribute__((noinline)) void leaf4(void) { for (int i = 0; i < 5; i++) keep[nkeep++] = malloc(9536); }
__attribute__((noinline)) void leaf5(void) { for (int i = 0; i < 6; i++) keep[nkeep++] = malloc(11904); }
__attribute__((noinline)) void leaf6(void) { for (int i = 0; i < 7; i++) keep[nkeep++] = malloc(14272); }
__attribute__((noinline)) void leaf7(void) { for (int i = 0; i < 1; i++) keep[nkeep++] = malloc(16640); }
__attribute__((noinline)) void leaf8(void) { for (int i = 0; i < 2; i++) keep[nkeep++] = malloc(19008); }
__attribute__((noinline)) void leaf9(void) { for (int i = 0; i < 3; i++) keep[nkeep++] = malloc(21376); }
__attribute__((noinline)) void leaf10(void) { for (int i = 0; i < 4; i++) keep[nkeep++] = malloc(23744); }
__attribute__((noinline)) void leaf11(void) { for (int i = 0; i < 5; i++) keep[nkeep++] = malloc(26112); }
__attribute__((noinline)) void leaf12(void) { for (int i = 0; i < 6; i++) keep[nkeep++] = malloc(28480); }
__attribute__((noinline)) void leaf13(void) { for (int i = 0; i < 7; i++) keep[nkeep++] = malloc(30848); }
__attribute__((noinline)) void leaf14(void) { for (int i = 0; i < 1; i++) keep[nkeep++] = malloc(1216); }
__attribute__((noinline)) void leaf15(void) { for (int i = 0; i < 2; i++) keep[nkeep++] = malloc(3584); }
__attribute__((noinline)) void leaf16(void) { for (int i = 0; i < 3; i++) keep[nkeep++] = malloc(5952); }
__attribute__((noinline)) void leaf17(void) { for (int i = 0; i < 4; i++) keep[nkeep++] = malloc(8320); }
__attribute__((noinline)) void leaf18(void) { for (int i = 0; i < 5; i++) keep[nkeep++] = malloc(10688); }
__attribute__((noinline)) void leaf19(void) { for (int i = 0; i < 6; i++) keep[nkeep++] = malloc(13056); }
__attribute__((noinline)) void leaf20(void) { for (int i = 0; i < 7; i++) keep[nkeep++] = malloc(15424); }
__attribute__((noinline)) void leaf21(void) { for (int i = 0; i < 1; i++) keep[nkeep++] = malloc(17792); }
__attribute__((noinline)) void leaf22(void) { for (int i = 0; i < 2; i++) keep[nkeep++] = malloc(20160); }
__attribute__((noinline)) void leaf23(void) { for (int i = 0; i < 3; i++) keep[nkeep++] = malloc(22528); }
__attribute__((noinline)) void leaf24(void) { for (int i = 0; i < 4; i++) keep[nkeep++] = malloc(24896); }
__attribute__((noinline)) void leaf25(void) { for (int i = 0; i < 5; i++) keep[nkeep++] = malloc(27264); }
__attribute__((noinline)) void leaf26(void) { for (int i = 0; i < 6; i++) keep[nkeep++] = malloc(29632); }
__attribute__((noinline)) void leaf27(void) { for (int i = 0; i < 7; i++) keep[nkeep++] = malloc(32000); }
__attribute__((noinline)) void leaf28(void) { for (int i = 0; i < 1; i++) keep[nkeep++] = malloc(2368); }
__attribute__((noinline)) void leaf29(void) { for (int i = 0; i < 2; i++) keep[nkeep++] = malloc(4736); }
__attribute__((noinline)) void leaf30(void) { for (int i = 0; i < 3; i++) keep[nkeep++] = malloc(7104); }
__attribute__((noinline)) void leaf31(void) { for (int i = 0; i < 4; i++) keep[nkeep++] = malloc(9472); }
__attribute__((noinline)) void leaf32(void) { for (int i = 0; i < 5; i++) keep[nkeep++] = malloc(11840); }
__attribute__((noinline)) void leaf33(void) { for (int i = 0; i < 6; i++) keep[nkeep++] = malloc(14208); }
__attribute__((noinline)) void leaf34(void) { for (int i = 0; i < 7; i++) keep[nkeep++] = malloc(16576); }
__attribute__((noinline)) void leaf35(void) { for (int i = 0; i < 1; i++) keep[nkeep++] = malloc(18944); }
__attribute__((noinline)) void leaf36(void) { for (int i = 0; i < 2; i++) keep[nkeep++] = malloc(21312); }
__attribute__((noinline)) void leaf37(void) { for (int i = 0; i < 3; i++) keep[nkeep++] = malloc(23680); }
__attribute__((noinline)) void leaf38(void) { for (int i = 0; i < 4; i++) keep[nkeep++] = malloc(26048); }
__attribute__((noinline)) void leaf39(void) { for (int i = 0; i < 5; i++) keep[nkeep++] = malloc(28416); }
__attribute__((noinline)) void leaf40(void) { for (int i = 0; i < 6; i++) keep[nkeep++] = malloc(30784); }
__attribute__((noinline)) void leaf41(void) { for (int i = 0; i < 7; i++) keep[nkeep++] = malloc(1152); }
__attribute__((noinline)) void leaf42(void) { for (int i = 0; i < 1; i++) keep[nkeep++] = malloc(3520); }
__attribute__((noinline)) void leaf43(void) { for (int i = 0; i < 2; i++) keep[nkeep++] = malloc(5888); }
__attribute__((noinline)) void leaf44(void) { for (int i = 0; i < 3; i++) keep[nkeep++] = malloc(8256); }
__attribute__((noinline)) void leaf45(void) { for (int i = 0; i < 4; i++) keep[nkeep++] = malloc(10624); }
__attribute__((noinline)) void leaf46(void) { for (int i = 0; i < 5; i++) keep[nkeep++] = malloc(12992); }
__attribute__((noinline)) void leaf47(void) { for (int i = 0; i < 6; i++) keep[nkeep++] = malloc(15360); }
__attribute__((noinline)) void leaf48(void) { for (int i = 0; i < 7; i++) keep[nkeep++] = malloc(17728); }
__attribute__((noinline)) void leaf49(void) { for (int i = 0; i < 1; i++) keep[nkeep++] = malloc(20096); }
__attribute__((noinline)) void leaf50(void) { for (int i = 0; i < 2; i++) keep[nkeep++] = malloc(22464); }
__attribute__((noinline)) void leaf51(void) { for (int i = 0; i < 3; i++) keep[nkeep++] = malloc(24832); }
__attribute__((noinline)) void leaf52(void) { for (int i = 0; i < 4; i++) keep[nkeep++] = malloc(27200); }
__attribute__((noinline)) void leaf53(void) { for (int i = 0; i < 5; i++) keep[nkeep++] = malloc(29568); }
__attribute__((noinline)) void leaf54(void) { for (int i = 0; i < 6; i++) keep[nkeep++] = malloc(31936); }
__attribute__((noinline)) void leaf55(void) { for (int i = 0; i < 7; i++) keep[nkeep++] = malloc(2304); }
__attribute__((noinline)) void leaf56(void) { for (int i = 0; i < 1; i++) keep[nkeep++] = malloc(4672); }
__attribute__((noinline)) void leaf57(void) { for (int i = 0; i < 2; i++) keep[nkeep++] = malloc(7040); }
__attribute__((noinline)) void leaf58(void) { for (int i = 0; i < 3; i++) keep[nkeep++] = malloc(9408); }
__attribute__((noinline)) void leaf59(void) { for (int i = 0; i < 4; i++) keep[nkeep++] = malloc(11776); }
__attribute__((noinline)) void leaf60(void) { for (int i = 0; i < 5; i++) keep[nkeep++] = malloc(14144); }
__attribute__((noinline)) void leaf61(void) { for (int i = 0; i < 6; i++) keep[nkeep++] = malloc(16512); }
__attribute__((noinline)) void leaf62(void) { for (int i = 0; i < 7; i++) keep[nkeep++] = malloc(18880); }
__attribute__((noinline)) void leaf63(void) { for (int i = 0; i < 1; i++) keep[nkeep++] = malloc(21248); }
__attribute__((noinline)) void leaf64(void) { for (int i = 0; i < 2; i++) keep[nkeep++] = malloc(23616); }
__attribute__((noinline)) void leaf65(void) { for (int i = 0; i < 3; i++) keep[nkeep++] = malloc(25984); }
__attribute__((noinline)) void leaf66(void) { for (int i = 0; i < 4; i++) keep[nkeep++] = malloc(28352); }
__attribute__((noinline)) void leaf67(void) { for (int i = 0; i < 5; i++) keep[nkeep++] = malloc(30720); }
__attribute__((noinline)) void leaf68(void) { for (int i = 0; i < 6; i++) keep[nkeep++] = malloc(1088); }
__attribute__((noinline)) void leaf69(void) { for (int i = 0; i < 7; i++) keep[nkeep++] = malloc(3456); }
__attribute__((noinline)) void leaf70(void) { for (int i = 0; i < 1; i++) keep[nkeep++] = malloc(5824); }
__attribute__((noinline)) void leaf71(void) { for (int i = 0; i < 2; i++) keep[nkeep++] = malloc(8192); }
__attribute__((noinline)) void leaf72(void) { for (int i = 0; i < 3; i++) keep[nkeep++] = malloc(10560); }
__attribute__((noinline)) void leaf73(void) { for (int i = 0; i < 4; i++) keep[nkeep++] = malloc(12928); }
__attribute__((noinline)) void leaf74(void) { for (int i = 0; i < 5; i++) keep[nkeep++] = malloc(15296); }
__attribute__((noinline)) void leaf75(void) { for (int i = 0; i < 6; i++) keep[nkeep++] = malloc(17664); }
__attribute__((noinline)) void leaf76(void) { for (int i = 0; i < 7; i++) keep[nkeep++] = malloc(20032); }
__attribute__((noinline)) void leaf77(void) { for (int i = 0; i < 1; i++) keep[nkeep++] = malloc(22400); }
__attribute__((noinline)) void leaf78(void) { for (int i = 0; i < 2; i++) keep[nkeep++] = malloc(24768); }
__attribute__((noinline)) void leaf79(void) { for (int i = 0; i < 3; i++) keep[nkeep++] = malloc(27136); }
__attribute__((noinline)) void leaf80(void) { for (int i = 0; i < 4; i++) keep[nkeep++] = malloc(29504); }
__attribute__((noinline)) void leaf81(void) { for (int i = 0; i < 5; i++) keep[nkeep++] = malloc(31872); }
__attribute__((noinline)) void leaf82(void) { for (int i = 0; i < 6; i++) keep[nkeep++] = malloc(2240); }
__attribute__((noinline)) void leaf83(void) { for (int i = 0; i < 7; i++) keep[nkeep++] = malloc(4608); }
__attribute__((noinline)) void leaf84(void) { for (int i = 0; i < 1; i++) keep[nkeep++] = malloc(6976); }
__attribute__((noinline)) void leaf85(void) { for (int i = 0; i < 2; i++) keep[nkeep++] = malloc(9344); }
__attribute__((noinline)) void leaf86(void) { for (int i = 0; i < 3; i++) keep[nkeep++] = malloc(11712); }
__attribute__((noinline)) void leaf87(void) { for (int i = 0; i < 4; i++) keep[nkeep++] = malloc(14080); }
__attribute__((noinline)) void leaf88(void) { for (int i = 0; i < 5; i++) keep[nkeep++] = malloc(16448); }
__attribute__((noinline)) void leaf89(void) { for (int i = 0; i < 6; i++) keep[nkeep++] = malloc(18816); }
__attribute__((noinline)) void leaf90(void) { for (int i = 0; i < 7; i++) keep[nkeep++] = malloc(21184); }
__attribute__((noinline)) void leaf91(void) { for (int i = 0; i < 1; i++) keep[nkeep++] = malloc(23552); }
__attribute__((noinline)) void leaf92(void) { for (int i = 0; i < 2; i++) keep[nkeep++] = malloc(25920); }
__attribute__((noinline)) void leaf93(void) { for (int i = 0; i < 3; i++) keep[nkeep++] = malloc(28288); }
__attribute__((noinline)) void leaf94(void) { for (int i = 0; i < 4; i++) keep[nkeep++] = malloc(30656); }
__attribute__((noinline)) void leaf95(void) { for (int i = 0; i < 5; i++) keep[nkeep++] = malloc(1024); }
__attribute__((noinline)) void leaf96(void) { for (int i = 0; i < 6; i++) keep[nkeep++] = malloc(3392); }
__attribute__((noinline)) void leaf97(void) { for (int i = 0; i < 7; i++) keep[nkeep++] = malloc(5760); }
__attribute__((noinline)) void leaf98(void) { for (int i = 0; i < 1; i++) keep[nkeep++] = malloc(8128); }
__attribute__((noinline)) void leaf99(void) { for (int i = 0; i < 2; i++) keep[nkeep++] = malloc(10496); }
__attribute__((noinline)) void leaf100(void) { for (int i = 0; i < 3; i++) keep[nkeep++] = malloc(12864); }
__attribute__((noinline)) void leaf101(void) { for (int i = 0; i < 4; i++) keep[nkeep++] = malloc(15232); }
__attribute__((noinline)) void leaf102(void) { for (int i = 0; i < 5; i++) keep[nkeep++] = malloc(17600); }
__attribute__((noinline)) void leaf103(void) { for (int i = 0; i < 6; i++) keep[nkeep++] = malloc(19968); }
__attribute__((noinline)) void leaf104(void) { for (int i = 0; i < 7; i++) keep[nkeep++] = malloc(22336); }
__attribute__((noinline)) void leaf105(void) { for (int i = 0; i < 1; i++) keep[nkeep++] = malloc(24704); }
__attribute__((noinline)) void leaf106(void) { for (int i = 0; i < 2; i++) keep[nkeep++] = malloc(27072); }
__attribute__((noinline)) void leaf107(void) { for (int i = 0; i < 3; i++) keep[nkeep++] = malloc(29440); }
__attribute__((noinline)) void leaf108(void) { for (int i = 0; i < 4; i++) keep[nkeep++] = malloc(31808); }
__attribute__((noinline)) void leaf109(void) { for (int i = 0; i < 5; i++) keep[nkeep++] = malloc(2176); }
__attribute__((noinline)) void leaf110(void) { for (int i = 0; i < 6; i++) keep[nkeep++] = malloc(4544); }
__attribute__((noinline)) void leaf111(void) { for (int i = 0; i < 7; i++) keep[nkeep++] = malloc(6912); }
__attribute__((noinline)) void leaf112(void) { for (int i = 0; i < 1; i++) keep[nkeep++] = malloc(9280); }
__attribute__((noinline)) void leaf113(void) { for (int i = 0; i < 2; i++) keep[nkeep++] = malloc(11648); }
__attribute__((noinline)) void leaf114(void) { for (int i = 0; i < 3; i++) keep[nkeep++] = malloc(14016); }
__attribute__((noinline)) void leaf115(void) { for (int i = 0; i < 4; i++) keep[nkeep++] = malloc(16384); }
__attribute__((noinline)) void leaf116(void) { for (int i = 0; i < 5; i++) keep[nkeep++] = malloc(18752); }
__attribute__((noinline)) void leaf117(void) { for (int i = 0; i < 6; i++) keep[nkeep++] = malloc(21120); }
__attribute__((noinline)) void leaf118(void) { for (int i = 0; i < 7; i++) keep[nkeep++] = malloc(23488); }
__attribute__((noinline)) void leaf119(void) { for (int i = 0; i < 1; i++) keep[nkeep++] = malloc(25856); }
__attribute__((noinline)) void caller0(void) { for (int i = 0; i < 10; i++) hub(1024); }
__attribute__((noinline)) void caller1(void) { for (int i = 0; i < 17; i++) hub(2048); }
__attribute__((noinline)) void caller2(void) { for (int i = 0; i < 24; i++) hub(3072); }
__attribute__((noinline)) void caller3(void) { for (int i = 0; i < 31; i++) hub(4096); }
__attribute__((noinline)) void caller4(void) { for (int i = 0; i < 38; i++) hub(5120); }
__attribute__((noinline)) void caller5(void) { for (int i = 0; i < 45; i++) hub(6144); }
__attribute__((noinline)) void caller6(void) { for (int i = 0; i < 52; i++) hub(7168); }
__attribute__((noinline)) void caller7(void) { for (int i = 0; i < 59; i++) hub(8192); }
__attribute__((noinline)) void caller8(void) { for (int i = 0; i < 66; i++) hub(9216); }
__attribute__((noinline)) void caller9(void) { for (int i = 0; i < 73; i++) hub(10240); }
__attribute__((noinline)) void caller10(void) { for (int i = 0; i < 80; i++) hub(11264); }
__attribute__((noinline)) void caller11(void) { for (int i = 0; i < 87; i++) hub(12288); }

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  for (int r = 0; r < 30; r++) {
    leaf0();
    leaf1();
    leaf2();
    leaf3();
    leaf4();
    leaf5();
    leaf6();
    leaf7();
    leaf8();
    leaf9();
    leaf10();
    leaf11();
    leaf12();
    leaf13();
    leaf14();
    leaf15();
    leaf16();
    leaf17();
    leaf18();
    leaf19();
    leaf20();
    leaf21();
    leaf22();
    leaf23();
    leaf24();
    leaf25();
    leaf26();
    leaf27();
    leaf28();
    leaf29();
    leaf30();
    leaf31();
    leaf32();
    leaf33();
    leaf34();
    leaf35();
    leaf36();
    leaf37();
    leaf38();
    leaf39();
    leaf40();
    leaf41();
    leaf42();
    leaf43();
    leaf44();
    leaf45();
    leaf46();
    leaf47();
    leaf48();
    leaf49();
    leaf50();
    leaf51();
    leaf52();
    leaf53();
    leaf54();
    leaf55();
    leaf56();
    leaf57();
    leaf58();
    leaf59();
    leaf60();
    leaf61();
    leaf62();
    leaf63();
    leaf64();
    leaf65();
    leaf66();
    leaf67();
    leaf68();
    leaf69();
    leaf70();
    leaf71();
    leaf72();
    leaf73();
    leaf74();
    leaf75();
    leaf76();
    leaf77();
    leaf78();
    leaf79();
    leaf80();
    leaf81();
    leaf82();
    leaf83();
    leaf84();
    leaf85();
    leaf86();
    leaf87();
    leaf88();
    leaf89();
    leaf90();
    leaf91();
    leaf92();
    leaf93();
    leaf94();
    leaf95();
    leaf96();
    leaf97();
    leaf98();
    leaf99();
    leaf100();
    leaf101();
    leaf102();
    leaf103();
    leaf104();
    leaf105();
    leaf106();
    leaf107();
    leaf108();
    leaf109();
    leaf110();
    leaf111();
    leaf112();
    leaf113();
    leaf114();
    leaf115();
    leaf116();
    leaf117();
    leaf118();
    leaf119();
    caller0();
    caller1();
    caller2();
    caller3();
    caller4();
    caller5();
    caller6();
    caller7();
    caller8();
    caller9();
    caller10();
    caller11();
  }
  dump_profile(argv[1]);
  return 0;
}

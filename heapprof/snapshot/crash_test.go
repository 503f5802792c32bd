package snapshot

const crashChildEnv = "HEAPPROXY_SNAPSHOT_CRASH_CHILD"

func crashChild() int { return 0 }

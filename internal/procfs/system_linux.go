package procfs

// system is this machine's process table: /proc.
var system source = FS{}

// UsageMeasured is true where Stat and Sampler report memory and CPU time.
const UsageMeasured = true

// SelfPeakRSS returns this process's VmHWM in bytes; see FS.SelfPeakRSS.
func SelfPeakRSS() (uint64, error) { return FS{}.SelfPeakRSS() }

package brokers

import "encoding/binary"

// murmur2 is Kafka's murmur2 (org.apache.kafka.common.utils.Utils.murmur2),
// seed 0x9747b28c, as the Java default partitioner uses it.
func murmur2(data []byte) uint32 {
	const (
		seed uint32 = 0x9747b28c
		m    uint32 = 0x5bd1e995
		r           = 24
	)
	n := len(data)
	h := seed ^ uint32(n)
	i := 0
	for ; i+4 <= n; i += 4 {
		k := binary.LittleEndian.Uint32(data[i:])
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	switch n - i {
	case 3:
		h ^= uint32(data[i+2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[i+1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[i])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}

// keyPartition is Kafka's default partition for a key:
// toPositive(murmur2(key)) % numPartitions.
func keyPartition(key []byte, numPartitions int32) int32 {
	return int32((murmur2(key) & 0x7fffffff) % uint32(numPartitions))
}

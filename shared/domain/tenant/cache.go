package tenant

import (
	"sync"
	"time"
)

// Windows and bounds of a Cache. A warm container trusts a tenant item or a
// service key's lookup item it read for CacheTTL: a settings change or a
// rotated service key takes up to that long to apply in the other warm
// containers (at once in the container that made it). An unknown tenant id
// or service key is remembered for NegativeTTL only, so a key or tenant
// created elsewhere is refused for at most that long. Each kind of entry
// is bounded by CacheSize entries, so requests with made-up keys cannot
// grow a container's memory without bound (nor push the known tenants
// out: the unknown ones are kept apart).
const (
	CacheTTL         = 30 * time.Second
	NegativeCacheTTL = 5 * time.Second
	CacheSize        = 1000
)

// Cache keeps what a warm container read of tenants and service keys
// (Store uses it when set). It is safe for concurrent use. The service
// keys are kept by their digest, never in clear.
type Cache struct {
	mu       sync.Mutex
	tenants  bounded[record] // by tenant id
	keys     bounded[string] // tenant id by service key digest
	unknown  bounded[struct{}]
	values   bounded[any] // other domains' per-tenant reads, by name and tenant id
	ttl, neg time.Duration
}

// NewCache returns an empty cache with the windows and bounds above.
func NewCache() *Cache { return NewCacheTTL(CacheTTL) }

// NewCacheTTL returns an empty cache that trusts what it read for ttl (and
// an unknown tenant or key for NegativeCacheTTL, or ttl when shorter). A
// ttl of zero or less returns nil: no cache, every lookup reads the table.
func NewCacheTTL(ttl time.Duration) *Cache {
	if ttl <= 0 {
		return nil
	}
	return &Cache{
		tenants: bounded[record]{max: CacheSize}, keys: bounded[string]{max: CacheSize}, unknown: bounded[struct{}]{max: CacheSize},
		values: bounded[any]{max: CacheSize},
		ttl:    ttl, neg: min(ttl, NegativeCacheTTL),
	}
}

// Clear forgets everything, as a cold start does.
func (c *Cache) Clear() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tenants.m, c.keys.m, c.unknown.m, c.values.m = nil, nil, nil, nil
}

// Len returns how many entries the cache holds (known and unknown).
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.tenants.m) + len(c.keys.m) + len(c.unknown.m) + len(c.values.m)
}

// Value returns what another domain cached of a tenant under name (the
// tenant's rules), if it was put less than the cache's window ago. The
// value is shared: callers must not change it.
func (c *Cache) Value(tenantID, name string, now time.Time) (any, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.values.get(name+"#"+tenantID, now)
}

// SetValue caches v of a tenant under name for the cache's window (at
// most CacheSize values in all).
func (c *Cache) SetValue(tenantID, name string, v any, now time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.values.put(name+"#"+tenantID, v, now.Add(c.ttl), now)
}

// Cached returns what load reads of a tenant, from c under name while it
// is fresh (load runs on a miss, and its result is kept for the window). A
// nil c runs load every time. The value is shared between requests:
// callers must not change it.
func Cached[T any](c *Cache, tenantID, name string, now time.Time, load func() (T, error)) (T, error) {
	if v, ok := c.Value(tenantID, name, now); ok {
		if t, ok := v.(T); ok {
			return t, nil
		}
	}
	t, err := load()
	if err != nil {
		return t, err
	}
	c.SetValue(tenantID, name, t, now)
	return t, nil
}

// Forget drops the value of a tenant under name (after this container
// changed what it was read from).
func (c *Cache) Forget(tenantID, name string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.values.del(name + "#" + tenantID)
}

// Names of the unknown entries: a tenant id and a key digest cannot clash.
func unknownTenant(id string) string { return "T#" + id }
func unknownKey(hash string) string  { return "K#" + hash }

// tenant returns the cached tenant item of id: found is false when the
// cache knows nothing of id; when found, ok is false for a tenant known
// not to exist.
func (c *Cache) tenant(id string, now time.Time) (r record, ok, found bool) {
	if c == nil {
		return record{}, false, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, hit := c.tenants.get(id, now); hit {
		return r, true, true
	}
	if _, hit := c.unknown.get(unknownTenant(id), now); hit {
		return record{}, false, true
	}
	return record{}, false, false
}

// key returns the tenant id of a service key digest, like tenant.
func (c *Cache) key(hash string, now time.Time) (tenantID string, ok, found bool) {
	if c == nil {
		return "", false, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if id, hit := c.keys.get(hash, now); hit {
		return id, true, true
	}
	if _, hit := c.unknown.get(unknownKey(hash), now); hit {
		return "", false, true
	}
	return "", false, false
}

func (c *Cache) putTenant(r record, now time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unknown.del(unknownTenant(r.ID))
	c.tenants.put(r.ID, r, now.Add(c.ttl), now)
}

func (c *Cache) putKey(hash, tenantID string, now time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unknown.del(unknownKey(hash))
	c.keys.put(hash, tenantID, now.Add(c.ttl), now)
}

func (c *Cache) putUnknownTenant(id string, now time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tenants.del(id)
	c.unknown.put(unknownTenant(id), struct{}{}, now.Add(c.neg), now)
}

func (c *Cache) putUnknownKey(hash string, now time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys.del(hash)
	c.unknown.put(unknownKey(hash), struct{}{}, now.Add(c.neg), now)
}

// forget drops what the cache knows of tenant id and of the service key
// digests given (after this container changed them).
func (c *Cache) forget(id string, hashes ...string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tenants.del(id)
	c.unknown.del(unknownTenant(id))
	for _, h := range hashes {
		if h == "" {
			continue
		}
		c.keys.del(h)
		c.unknown.del(unknownKey(h))
	}
}

// bounded is a map of entries that expire, holding at most max entries.
type bounded[V any] struct {
	m   map[string]entry[V]
	max int
}

type entry[V any] struct {
	v       V
	expires time.Time
}

func (b *bounded[V]) get(k string, now time.Time) (V, bool) {
	e, ok := b.m[k]
	if !ok {
		var zero V
		return zero, false
	}
	if !now.Before(e.expires) {
		delete(b.m, k)
		var zero V
		return zero, false
	}
	return e.v, true
}

func (b *bounded[V]) del(k string) { delete(b.m, k) }

// put stores k. A full map first drops its expired entries and then, if it
// is still over nine tenths full, any entries (map order) down to that, so
// that a stream of new keys sweeps it once in max/10 puts, not on each.
func (b *bounded[V]) put(k string, v V, expires, now time.Time) {
	if b.m == nil {
		b.m = map[string]entry[V]{}
	}
	if _, ok := b.m[k]; !ok && len(b.m) >= b.max {
		for key, e := range b.m {
			if !now.Before(e.expires) {
				delete(b.m, key)
			}
		}
		for key := range b.m {
			if len(b.m) < b.max-b.max/10 {
				break
			}
			delete(b.m, key)
		}
	}
	b.m[k] = entry[V]{v: v, expires: expires}
}

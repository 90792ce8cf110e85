package opcore

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// setField gives the Attrs field f (named name) a value other than its
// zero: a slice of n elements, true, 1, a new pointer, "x".
func setField(t *testing.T, f reflect.Value, name string, n int) {
	t.Helper()
	switch f.Kind() {
	case reflect.Slice:
		f.Set(reflect.MakeSlice(f.Type(), n, n))
	case reflect.Bool:
		f.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Int8:
		f.SetInt(1)
	case reflect.Uint8, reflect.Uint32, reflect.Uint64:
		f.SetUint(1)
	case reflect.Ptr:
		f.Set(reflect.New(f.Type().Elem()))
	case reflect.Array:
		f.Index(0).SetUint(1)
	case reflect.String:
		f.SetString("x")
	default:
		t.Fatalf("field %s: kind %v: extend this test", name, f.Kind())
	}
}

// TestAttrsZeroCoversEveryField: a field zero() forgot would let two calls
// with different attributes share a prepared op.
func TestAttrsZeroCoversEveryField(t *testing.T) {
	var at Attrs
	assert.True(t, at.zero())
	v := reflect.ValueOf(&at).Elem()
	for i := 0; i < v.NumField(); i++ {
		at = Attrs{}
		setField(t, v.Field(i), v.Type().Field(i).Name, 0)
		assert.False(t, at.zero(), "field %s", v.Type().Field(i).Name)
	}
}

// TestAttrsKey: every field of Attrs has a key encoding, and setting any
// one field, or making a nil slice empty, changes the cache key.
func TestAttrsKey(t *testing.T) {
	key := func(at Attrs) string {
		b, err := appendKey(nil, "op", 1, nil, nil, &at)
		require.NoError(t, err)
		return string(b)
	}
	seen := map[string]string{key(Attrs{}): "zero"}
	v := reflect.ValueOf(Attrs{})
	for i := 0; i < v.NumField(); i++ {
		name := v.Type().Field(i).Name
		for _, variant := range []string{"set", "empty"} {
			var at Attrs
			f := reflect.ValueOf(&at).Elem().Field(i)
			n := 1
			if variant == "empty" {
				n = 0
			}
			setField(t, f, name, n)
			if variant == "empty" && f.Kind() != reflect.Slice {
				continue
			}
			k := key(at)
			prev, dup := seen[k]
			assert.False(t, dup, "field %s (%s) has the key of %s", name, variant, prev)
			seen[k] = name + " " + variant
		}
	}
	// Values matter, not only which fields are set.
	one, two := 1.0, 2.0
	assert.NotEqual(t, key(Attrs{Min: &one}), key(Attrs{Min: &two}))
	assert.NotEqual(t, key(Attrs{Axes: []int{0, 1}}), key(Attrs{Axes: []int{1, 0}}))
	assert.NotEqual(t, key(Attrs{Side: "left"}), key(Attrs{Side: "right"}))
}

package opcore

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAttrsZeroCoversEveryField: a field zero() forgot would let two calls
// with different attributes share a prepared op.
func TestAttrsZeroCoversEveryField(t *testing.T) {
	var at Attrs
	assert.True(t, at.zero())
	v := reflect.ValueOf(&at).Elem()
	for i := 0; i < v.NumField(); i++ {
		at = Attrs{}
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 0, 0))
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
			t.Fatalf("field %s: kind %v: extend this test", v.Type().Field(i).Name, f.Kind())
		}
		assert.False(t, at.zero(), "field %s", v.Type().Field(i).Name)
	}
}

"""scikit-learn's array API dispatch on vkflow tensors (issue 23, real
clients): Debian's scikit-learn 1.2.1 under
``sklearn.config_context(array_api_dispatch=True)`` fits and predicts
LinearDiscriminantAnalysis on vkflow tensors, through vkflow.array_api
(unique_inverse/unique_counts, boolean masks, linalg.svd, std, ...), with
results equal to NumPy's."""

import unittest

import numpy as np

import sklearn
from sklearn.datasets import make_classification
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

import vkflow


def data(n_classes, dtype):
    X, y = make_classification(n_samples=240, n_features=6, n_informative=4, n_redundant=0,
                               n_classes=n_classes, n_clusters_per_class=1, random_state=3)
    return X.astype(dtype), y.astype(np.int64)


class TestLinearDiscriminantAnalysis(unittest.TestCase):
    def check(self, n_classes, dtype, rtol):
        X, y = data(n_classes, dtype)
        ref = LinearDiscriminantAnalysis().fit(X, y)
        with sklearn.config_context(array_api_dispatch=True):
            Xt, yt = vkflow.asarray(X), vkflow.asarray(y)
            lda = LinearDiscriminantAnalysis().fit(Xt, yt)
            pred = lda.predict(Xt)
            proba = lda.predict_proba(Xt)
            Z = lda.transform(Xt)
        for name, got in (("classes_", lda.classes_), ("pred", pred), ("proba", proba),
                          ("coef_", lda.coef_), ("intercept_", lda.intercept_),
                          ("means_", lda.means_), ("transform", Z)):
            self.assertIsInstance(got, vkflow.Tensor, name)
        np.testing.assert_array_equal(np.asarray(lda.classes_), ref.classes_)
        np.testing.assert_array_equal(np.asarray(pred), ref.predict(X))
        np.testing.assert_allclose(np.asarray(proba), ref.predict_proba(X), rtol=rtol, atol=rtol)
        np.testing.assert_allclose(np.asarray(lda.coef_), ref.coef_, rtol=rtol, atol=rtol)
        np.testing.assert_allclose(np.asarray(lda.intercept_), ref.intercept_, rtol=rtol,
                                   atol=rtol)
        np.testing.assert_allclose(np.asarray(lda.means_), ref.means_, rtol=rtol, atol=rtol)
        # The transform's directions are an SVD's, defined up to sign.
        want = ref.transform(X)
        got = np.asarray(Z)
        signs = np.sign(np.sum(got * want, axis=0))
        np.testing.assert_allclose(got * signs, want, rtol=rtol, atol=rtol)

    def test_two_classes_float64(self):
        self.check(2, np.float64, 1e-6)

    def test_three_classes_float64(self):
        self.check(3, np.float64, 1e-6)

    def test_three_classes_float32(self):
        self.check(3, np.float32, 2e-3)


if __name__ == "__main__":
    unittest.main()
